import type { Readable } from "node:stream";

/**
 * The streams a command uses instead of its process's, so tests run commands in-process. The
 * environment is the command's other argument, and its exit status is its return value.
 */
export interface CommandIO {
  stdin: Readable;
  stdout(text: string): void;
  stderr(text: string): void;
  /**
   * Watches stdout for failed writes: the signal aborts on the first, with the error as reason
   * (EPIPE: the reader went away, as in `… | head`). Once watched, a failed write no longer
   * crashes the process; a command printing a report stops when the signal aborts. Absent where
   * stdout cannot fail.
   */
  watchStdout?(): AbortSignal;
  /** Bytes written to stdout that its reader has not taken yet. */
  unreadStdout?(): number;
  /**
   * Ends the process now with `code`, once stderr has taken what was written to it: for a command
   * whose parent stopped reading stdout, whose unread output would otherwise hold the process for ever.
   */
  exitNow?(code: number): void;
}

export const processIO = (): CommandIO => ({
  stdin: process.stdin,
  stdout: (text) => void process.stdout.write(text),
  stderr: (text) => void process.stderr.write(text),
  watchStdout: () => watchWrites(process.stdout),
  unreadStdout: () => process.stdout.writableLength,
  exitNow: (code) => {
    const exit = () => process.exit(code);
    // stderr may be unread too: it gets a moment, not a hold on the process.
    setTimeout(exit, 500).unref();
    process.stderr.write("", exit);
  },
});

const watched = new WeakMap<NodeJS.WritableStream, AbortSignal>();

function watchWrites(stream: NodeJS.WritableStream): AbortSignal {
  let signal = watched.get(stream);
  if (!signal) {
    const failed = new AbortController();
    stream.on("error", (err: Error) => failed.abort(err));
    signal = failed.signal;
    watched.set(stream, signal);
  }
  return signal;
}

/** Whether a write failed because the reader closed its end (`… | head`), which is no error of the command. */
export const readerWentAway = (reason: unknown): boolean => (reason as NodeJS.ErrnoException | undefined)?.code === "EPIPE";

/** A command-line mistake: printed with the usage, never with a stack trace. */
export class UsageError extends Error {
  constructor(
    message: string,
    readonly exitCode = 2,
  ) {
    super(message);
  }
}

/** Ends a command with an exit status after its message was printed; `run` turns it into the status. */
export class CommandExit extends Error {
  constructor(readonly exitCode: number) {
    super(`exit ${exitCode}`);
  }
}

/** Runs a command body, turning a CommandExit into its status. */
export async function exitStatus(body: () => Promise<number>): Promise<number> {
  try {
    return await body();
  } catch (err) {
    if (err instanceof CommandExit) return err.exitCode;
    throw err;
  }
}
