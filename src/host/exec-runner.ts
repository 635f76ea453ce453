import { spawn } from "node:child_process";
import { StringDecoder } from "node:string_decoder";
import type { SessionExecResult } from "../../generated/tau-v18.js";

/**
 * Runs one `session.exec` command the way Tau does (spec §4.3): a fresh non-interactive login Bash
 * in the execution environment's directory. The command's own failures (non-zero exit, signals,
 * timeouts, aborts) are results, not errors; only a Bash that cannot be started at all rejects.
 */

export interface ExecSpec {
  command: string;
  /** args[0] becomes `$0`, the rest `$@`; never interpolated into the command text. */
  args?: string[];
  /** Added to the host environment; `HOME` is ignored (Tau never lets it be overridden). */
  env?: Record<string, string>;
  stdin?: Buffer;
  cwd: string;
  timeoutMs?: number;
  maxCaptureBytes?: number;
}

export const DEFAULT_MAX_CAPTURE_BYTES = 1024 * 1024;
export const MAX_CAPTURE_BYTES = 24 * 1024 * 1024;
/** Time a process group gets between SIGTERM and SIGKILL, and SIGKILL and giving up on its pipes. */
const KILL_GRACE_MS = 1000;

/**
 * Keeps stdout and stderr separately plus their interleaving in arrival order, within one shared
 * byte budget. Each stream has its own UTF-8 decoder so a multi-byte character split across chunks
 * is decoded whole; `output` is built from the same decoded pieces, so it always equals some
 * interleaving of `stdout` and `stderr`.
 */
class Capture {
  private remaining: number;
  truncated = false;
  output = "";
  readonly text = { stdout: "", stderr: "" };
  private readonly decoders = { stdout: new StringDecoder("utf8"), stderr: new StringDecoder("utf8") };

  constructor(maxBytes: number) {
    this.remaining = maxBytes;
  }

  /** Called for every chunk, also after the budget is spent, so the pipes keep draining. */
  add(stream: "stdout" | "stderr", chunk: Buffer): void {
    if (this.remaining <= 0) {
      if (chunk.length > 0) this.truncated = true;
      return;
    }
    const kept = chunk.length > this.remaining ? chunk.subarray(0, this.remaining) : chunk;
    if (kept.length < chunk.length) this.truncated = true;
    this.remaining -= kept.length;
    this.append(stream, this.decoders[stream].write(kept));
  }

  finish(): void {
    for (const stream of ["stdout", "stderr"] as const) {
      // After truncation, bytes held by a decoder are half a character cut off by the budget, not
      // malformed output: dropping them avoids a spurious replacement character at the end.
      const rest = this.decoders[stream].end();
      if (!this.truncated) this.append(stream, rest);
    }
  }

  private append(stream: "stdout" | "stderr", piece: string): void {
    if (piece.length === 0) return;
    this.text[stream] += piece;
    this.output += piece;
  }
}

function captureLimit(requested: number | undefined): number {
  if (requested === undefined || !Number.isFinite(requested)) return DEFAULT_MAX_CAPTURE_BYTES;
  return Math.max(0, Math.min(Math.floor(requested), MAX_CAPTURE_BYTES));
}

function execEnvironment(extra: Record<string, string> | undefined): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const [name, value] of Object.entries(extra ?? {})) {
    if (name !== "HOME") env[name] = value;
  }
  return env;
}

const abortedBeforeStart = (): SessionExecResult => ({
  output: "",
  stdout: "",
  stderr: "",
  exitCode: null,
  truncated: false,
  timedOut: false,
  aborted: true,
  closeSignal: null,
});

export function runExec(spec: ExecSpec, signal?: AbortSignal): Promise<SessionExecResult> {
  if (signal?.aborted) return Promise.resolve(abortedBeforeStart());

  return new Promise<SessionExecResult>((resolve, reject) => {
    const capture = new Capture(captureLimit(spec.maxCaptureBytes));
    let timedOut = false;
    let aborted = false;
    let settled = false;
    const timers: NodeJS.Timeout[] = [];

    // detached: the child leads its own process group, so a kill reaches everything it started.
    const child = spawn("bash", ["-l", "-c", spec.command, ...(spec.args ?? [])], {
      cwd: spec.cwd,
      env: execEnvironment(spec.env),
      detached: true,
      stdio: [spec.stdin === undefined ? "ignore" : "pipe", "pipe", "pipe"],
    });

    const signalGroup = (name: NodeJS.Signals): void => {
      if (child.pid === undefined) return;
      try {
        process.kill(-child.pid, name);
      } catch {
        // ESRCH: the whole group is already gone.
      }
    };

    let killing = false;
    const killGroup = (): void => {
      if (killing || settled) return;
      killing = true;
      signalGroup("SIGTERM");
      timers.push(
        setTimeout(() => {
          signalGroup("SIGKILL");
          // A process that left the group could still hold the pipes open; stop waiting for it.
          timers.push(
            setTimeout(() => {
              child.stdout?.destroy();
              child.stderr?.destroy();
            }, KILL_GRACE_MS),
          );
        }, KILL_GRACE_MS),
      );
    };

    const onAbort = (): void => {
      // A timeout already under way stays the reported cause.
      if (settled || timedOut) return;
      aborted = true;
      killGroup();
    };

    const cleanUp = (): void => {
      settled = true;
      for (const timer of timers) clearTimeout(timer);
      signal?.removeEventListener("abort", onAbort);
    };

    child.on("error", (error: NodeJS.ErrnoException) => {
      if (settled) return;
      cleanUp();
      // Node reports a missing cwd as a failure to spawn "bash", which would be misleading alone.
      reject(new Error(`cannot start bash in ${spec.cwd}: ${error.message}`, { cause: error }));
    });

    child.on("close", (code: number | null, closeSignal: NodeJS.Signals | null) => {
      if (settled) return;
      cleanUp();
      capture.finish();
      resolve({
        output: capture.output,
        stdout: capture.text.stdout,
        stderr: capture.text.stderr,
        exitCode: code,
        truncated: capture.truncated,
        timedOut,
        aborted,
        closeSignal: closeSignal ?? null,
      });
    });

    if (child.pid === undefined) return; // spawn failed; the "error" event follows

    child.stdout!.on("data", (chunk: Buffer) => capture.add("stdout", chunk));
    child.stderr!.on("data", (chunk: Buffer) => capture.add("stderr", chunk));

    if (child.stdin) {
      // A command that never reads its input closes the pipe early (EPIPE); that is its choice.
      child.stdin.on("error", () => {});
      child.stdin.end(spec.stdin);
    }

    if (spec.timeoutMs !== undefined && spec.timeoutMs > 0) {
      timers.push(
        setTimeout(() => {
          if (settled || aborted) return;
          timedOut = true;
          killGroup();
        }, spec.timeoutMs),
      );
    }
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}
