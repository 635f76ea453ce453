import { SHUTDOWN_TURN_ENDING } from "../bridge/turn-endings.js";
import { GATEWAY_ERROR_CODES } from "../registry/error-codes.js";
import { RpcError } from "../shared/rpc-error.js";
import { DrainGate } from "../transports/call-gates.js";
import type { CallGate } from "../transports/jsonrpc-envelope.js";

/**
 * 8 s: with the close handshake's floor and the host's own shutdown it still ends inside the grace
 * period of `docker stop` (10 s before SIGKILL) and of Kubernetes (terminationGracePeriodSeconds,
 * 30 s). A longer drain needs a longer grace period (`docker run --stop-timeout`, the pod's
 * terminationGracePeriodSeconds), or the process is killed in the middle of it.
 */
export const DEFAULT_DRAIN_TIMEOUT_MS = 8_000;

/**
 * The least time clients get to answer the close frame once draining is over, even when the drain
 * used all of its time: enough for any client that is still reading, short enough to stay inside a
 * platform's grace period.
 */
export const MIN_CLOSE_HANDSHAKE_MS = 500;

/**
 * The most the work still running at the deadline gets to come to an end once it is stopped
 * (`atDeadline`): the actions get `turnsMs`, the requests they end `answersMs` more to be answered.
 */
const { turnsMs: DEADLINE_ACTIONS_MS, answersMs: ANSWERING_MS } = SHUTDOWN_TURN_ENDING;
export const DEADLINE_ENDING_MS = DEADLINE_ACTIONS_MS + ANSWERING_MS;

/** What is done with the work still running at the deadline; resolves with counts for the log. */
export type DeadlineAction = (budgetMs: number) => Promise<Record<string, number>>;

/** How often work counted by sources (which cannot announce their changes) is looked at again. */
const SOURCE_POLL_MS = 25;

export interface DrainOutcome {
  /** True when all in-flight work finished before the deadline. */
  drained: boolean;
  /** Ask requests still open at the deadline, failed with -32012. */
  failedRequests: number;
  /** Work of the sources still open at the deadline, by source name. */
  abandoned: Record<string, number>;
  /** What the deadline actions reported (present only when work was still running at the deadline). */
  atDeadline?: Record<string, number>;
}

/**
 * Graceful shutdown (SIGTERM/SIGINT). Once `drain()` starts the gateway stops taking work: new Ask
 * requests are refused with -32012 (retryable: nothing was done), readiness turns 503 and new
 * WebSocket connections are closed with 1001 (see drain-plugin.ts). Work already accepted gets
 * until the deadline to finish; Ask requests still open then are failed with -32012 rather than
 * dropped, so every accepted request is answered. What happens after (closing sockets, stopping
 * the embedded host) is the caller's.
 *
 * In-flight work is what passes through `gate`, plus whatever a source counts: e.g. the bridge
 * connection's upstream requests, which include every turn in flight (Tau answers `session.submit`
 * when the turn settles), so subscribers still see turns end.
 */
export class DrainController {
  private state: "serving" | "draining" | "stopped" = "serving";
  /** The requests in flight through `gate` (transports/call-gates.ts, with the connections' other gates). */
  private readonly calls = new DrainGate(() => this.wake?.());
  private readonly sources = new Map<string, () => number>();
  private readonly startListeners = new Set<() => void>();
  private readonly deadlineActions = new Set<DeadlineAction>();
  private wake: (() => void) | undefined;
  private draining_: Promise<DrainOutcome> | undefined;
  private forced = false;
  /** When the drain's time runs out (set when it starts). */
  private deadline: number | undefined;

  constructor(private readonly options: { timeoutMs: number }) {}

  /** True from the moment `drain()` is called. */
  get draining(): boolean {
    return this.state !== "serving";
  }

  get timeoutMs(): number {
    return this.options.timeoutMs;
  }

  /**
   * How long client connections may take to close once the drain is over: what is left of the
   * drain's time (at least MIN_CLOSE_HANDSHAKE_MS), or the whole drain timeout when the gateway is
   * closed without draining first. A client that does not answer by then is cut off.
   */
  closeHandshakeBudgetMs(now = Date.now()): number {
    const left = this.deadline === undefined ? this.options.timeoutMs : this.deadline - now;
    return Math.max(MIN_CLOSE_HANDSHAKE_MS, left);
  }

  /** Counts in-flight work that does not pass through `gate`. */
  addSource(name: string, count: () => number): void {
    this.sources.set(name, count);
  }

  /** Called once when draining starts. */
  onDrainStart(listener: () => void): () => void {
    this.startListeners.add(listener);
    return () => this.startListeners.delete(listener);
  }

  /**
   * Runs when work is still in flight at the deadline (or the wait was forced), before the requests
   * still open are failed: e.g. ending the turns still running, so their clients hear how they
   * ended and a request waiting for a turn (an ACP prompt) is answered by it. Actions get
   * DEADLINE_ENDING_MS between them; requests they bring to an end in that time are answered normally.
   */
  atDeadline(action: DeadlineAction): () => void {
    this.deadlineActions.add(action);
    return () => this.deadlineActions.delete(action);
  }

  /** Ask requests in flight plus what every source counts. */
  get inFlight(): number {
    let total = this.calls.size;
    for (const count of this.sources.values()) total += count();
    return total;
  }

  /** Runs a request unless draining (then -32012, retryable); a request still open at the deadline fails with -32012. */
  readonly gate: CallGate = this.calls.gate;

  /**
   * Stops taking work and waits (at most the timeout) for in-flight work to finish; then fails the
   * Ask requests still open. Calling it again returns the same outcome.
   */
  drain(): Promise<DrainOutcome> {
    this.draining_ ??= this.run();
    return this.draining_;
  }

  /** Ends the wait at once (e.g. a second signal): open work is treated as at the deadline. */
  force(): void {
    this.forced = true;
    this.wake?.();
  }

  private async run(): Promise<DrainOutcome> {
    this.state = "draining";
    this.calls.refuseNew();
    for (const listener of [...this.startListeners]) listener();
    const deadline = Date.now() + this.options.timeoutMs;
    this.deadline = deadline;
    await this.waitWhile(() => this.inFlight > 0 && !this.forced, deadline);
    const drained = this.inFlight === 0;
    const abandoned: Record<string, number> = {};
    for (const [name, count] of this.sources) {
      const open = count();
      if (open > 0) abandoned[name] = open;
    }
    const atDeadline = drained ? undefined : await this.runDeadlineActions();
    const failedRequests = this.calls.failOpen(abandonedAtDeadline(this.options.timeoutMs));
    this.state = "stopped";
    return { drained, failedRequests, abandoned, ...(atDeadline && { atDeadline }) };
  }

  /** The deadline actions, then (within the same budget) the requests they answered being written. */
  private async runDeadlineActions(): Promise<Record<string, number> | undefined> {
    if (this.deadlineActions.size === 0) return undefined;
    const until = Date.now() + DEADLINE_ENDING_MS;
    const reports = await Promise.all(
      [...this.deadlineActions].map((action) => action(DEADLINE_ACTIONS_MS).catch((): Record<string, number> => ({ deadlineActionsFailed: 1 }))),
    );
    await this.waitWhile(() => this.calls.size > 0, until);
    return Object.assign({}, ...reports) as Record<string, number>;
  }

  /** Waits until `busy` turns false (looked at on every change, and every SOURCE_POLL_MS) or `until`. */
  private async waitWhile(busy: () => boolean, until: number): Promise<void> {
    while (busy() && Date.now() < until) {
      await new Promise<void>((resolve) => {
        const timer = setTimeout(done, Math.min(SOURCE_POLL_MS, Math.max(0, until - Date.now())));
        function done() {
          clearTimeout(timer);
          resolve();
        }
        this.wake = done;
      });
      this.wake = undefined;
    }
  }
}

/** A request still running at the deadline: it may or may not have taken effect upstream. */
function abandonedAtDeadline(timeoutMs: number): RpcError {
  return new RpcError(
    GATEWAY_ERROR_CODES.upstream_unavailable,
    `gateway shutting down: the request did not finish within the drain timeout (${timeoutMs} ms); it may have taken effect upstream`,
    { reason: "drain_timeout", retryable: false },
  );
}
