import type { Readable } from "node:stream";

/** What a command needs from its process, so commands are testable without spawning. */
export interface CommandIO {
  stdin: Readable;
  stdout(text: string): void;
  stderr(text: string): void;
}

export const processIO = (): CommandIO => ({
  stdin: process.stdin,
  stdout: (text) => void process.stdout.write(text),
  stderr: (text) => void process.stderr.write(text),
});

/** A command-line mistake: printed with the usage, never with a stack trace. */
export class UsageError extends Error {
  constructor(
    message: string,
    readonly exitCode = 2,
  ) {
    super(message);
  }
}
