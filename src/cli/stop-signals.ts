/**
 * What stops a long-running command (`serve`, `host`, the stdio commands, a `--remote` relay):
 * SIGINT and SIGTERM, and, when npm started it, the end of the shell npm ran it in.
 *
 * `npx tau-gateway …`, `npm exec` and npm scripts run the command as `sh -c '…'`, and npm passes a
 * SIGTERM or SIGINT it receives on to that shell only. Debian's and Ubuntu's /bin/sh (dash) neither
 * passes it on nor execs the command in its place, so the shell dies of it, npm exits, and the
 * command would keep running, orphaned, holding its port. Under npm (it sets `npm_lifecycle_event`
 * for every script and for `npm exec`), the shell only ends before the command when it was signalled
 * (or when a script put the command in the background with `&`), so its end counts as the stop
 * request npm meant to pass on.
 */

export type StopCause = NodeJS.Signals | "parent-exited";

/** How often the parent is looked at: a stop request is noticed within this, and the check is one system call. */
const PARENT_POLL_MS = 200;

/** The parent when the command started, before any shell could have ended. */
const parentAtStart = process.ppid;
/** Whether npm started the command, so that its parent shell ending means a stop request. */
const startedByNpm = process.env.npm_lifecycle_event !== undefined;
/**
 * A real signal seen by any watch: a Ctrl-C in a terminal reaches npm's shell too (the whole
 * foreground group gets it), and its end then must not count as a second stop request.
 */
let signalSeen = false;
/** The parent's end is one stop request, told to one watch only. */
let parentExitTold = false;

/**
 * Calls `listener` on every SIGINT and SIGTERM, and once when the shell npm started the command in
 * is gone (unless a signal came first). Returns the function that stops watching.
 */
export function onStopSignals(listener: (cause: StopCause) => void): () => void {
  const onSignal = (signal: NodeJS.Signals) => {
    signalSeen = true;
    listener(signal);
  };
  process.on("SIGINT", onSignal);
  process.on("SIGTERM", onSignal);
  const parentWatch = startedByNpm && parentAtStart > 1 ? setInterval(checkParent, PARENT_POLL_MS) : undefined;
  // Never what keeps the process alive.
  parentWatch?.unref();
  function checkParent() {
    if (signalSeen || parentExitTold) return void clearInterval(parentWatch);
    if (process.ppid === parentAtStart) return;
    parentExitTold = true;
    clearInterval(parentWatch);
    listener("parent-exited");
  }
  return () => {
    process.off("SIGINT", onSignal);
    process.off("SIGTERM", onSignal);
    clearInterval(parentWatch);
  };
}

/** Resolves with the next stop request (onStopSignals), watching no longer after it. */
export function nextStopSignal(): Promise<StopCause> {
  return new Promise((resolve) => {
    const unwatch = onStopSignals((cause) => {
      unwatch();
      resolve(cause);
    });
  });
}
