import type { ChildProcess } from "node:child_process";
import { PassThrough, Readable, Writable } from "node:stream";
import type { Cleanups } from "./cleanups.js";
import { spawnOwnedCli, type ChildExit } from "./cli.js";


export interface AgentProcess {
  child: ChildProcess;
  /** For the SDK's ndJsonStream: what the client writes to, and what it reads from. */
  input: WritableStream<Uint8Array>;
  output: ReadableStream<Uint8Array>;
  /** Every line the agent wrote to stdout so far, parsed. */
  sent(): unknown[];
  /** Every line written to the agent's stdin so far, parsed. */
  received(): unknown[];
  /** Ends the agent's stdin, as an editor does when it lets go of the agent (the SDK's stream never does). */
  closeInput(): void;
  /** Writes one message as a line to the agent's stdin (for tests that speak without the SDK). */
  write(message: object): void;
  /** The first line the agent wrote (or writes within the timeout) that `match` accepts. */
  next(match: (message: any) => boolean, timeoutMs?: number): Promise<any>;
  stderr(): string;
  exit: Promise<ChildExit>;
}

/**
 * Spawns `tau-gateway acp ARGS` (spawnCli) as an editor would, with stdin and
 * stdout as the protocol's pipes; every line it writes is also kept for checking. Killed after
 * the test if still running.
 */
export function spawnAcpAgent(args: string[], cleanups: Cleanups, env: NodeJS.ProcessEnv = {}): AgentProcess {
  const { child, exit, stderr } = spawnOwnedCli(["acp", ...args], cleanups, env);
  const lines: unknown[] = [];
  let partial = "";
  const tee = new PassThrough();
  child.stdout!.on("data", (chunk: Buffer) => {
    partial += chunk.toString("utf8");
    const complete = partial.split("\n");
    partial = complete.pop()!;
    for (const line of complete) if (line.trim()) lines.push(JSON.parse(line));
    tee.write(chunk);
  });
  child.stdout!.on("end", () => tee.end());
  const received: unknown[] = [];
  const toAgent = new PassThrough();
  let partialIn = "";
  toAgent.on("data", (chunk: Buffer) => {
    partialIn += chunk.toString("utf8");
    const complete = partialIn.split("\n");
    partialIn = complete.pop()!;
    for (const line of complete) if (line.trim()) received.push(JSON.parse(line));
  });
  toAgent.pipe(child.stdin!);
  return {
    child,
    input: Writable.toWeb(toAgent) as WritableStream<Uint8Array>,
    received: () => [...received],
    closeInput: () => void toAgent.end(),
    write: (message) => void toAgent.write(`${JSON.stringify(message)}\n`),
    next: async (match, timeoutMs = 20_000) => {
      for (let waited = 0; waited <= timeoutMs; waited += 20) {
        const found = lines.find(match);
        if (found) return found;
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      throw new Error(`no matching line within ${timeoutMs} ms; lines: ${JSON.stringify(lines).slice(0, 2000)}`);
    },
    output: Readable.toWeb(tee) as ReadableStream<Uint8Array>,
    sent: () => [...lines],
    stderr,
    exit,
  };
}

export interface HostProcess {
  url: string;
  child: ChildProcess;
  stop(): Promise<void>;
}

/** Spawns `tau-gateway host --port 0 ARGS` and resolves with its ws:// URL once it listens. */
export function spawnTauHost(args: string[], cleanups: Cleanups): Promise<HostProcess> {
  const { child, exit, stderr, stop } = spawnOwnedCli(["host", "--port", "0", ...args], cleanups, {}, ["ignore", "ignore", "pipe"]);
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`host did not start in time; stderr:\n${stderr()}`)), 20_000);
    child.stderr!.on("data", () => {
      const match = /^tau host listening on (ws:\/\/\S+)$/m.exec(stderr());
      if (match) {
        clearTimeout(timer);
        resolve({ url: match[1]!, child, stop });
      }
    });
    void exit.then(() => {
      clearTimeout(timer);
      reject(new Error(`host exited before listening; stderr:\n${stderr()}`));
    });
  });
}
