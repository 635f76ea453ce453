import type { ChildProcessWithoutNullStreams } from "node:child_process";
import { readFileSync } from "node:fs";
import { spawnCli } from "../../support/cli.js";
import { InspectorSession } from "./inspector.js";

/**
 * `tau-gateway <command>` as its own process, as users run it, so the fuzz run can tell whether it
 * stays up and measure its memory apart from the test's own. It runs in one node process
 * (spawnCli: the test run's bundle, or the sources through tsx under `npm run fuzz`) with the
 * inspector on a free loopback port for garbage collection and heap readings.
 */

const INSPECTOR = /Debugger listening on (ws:\/\/\S+)/;
const LISTENING = /^tau-gateway listening on (http:\/\/\S+)$/m;
/** What is kept of stderr for failure reports; the rest is only counted. */
const KEPT_STDERR_CHARS = 20_000;

export interface MemoryReading {
  /** Resident set size now and at its peak (Linux /proc; 0 elsewhere). */
  rssBytes: number;
  peakRssBytes: number;
  /** Live JavaScript heap after a full collection. */
  heapUsedBytes: number;
}

export class GatewayProcess {
  /** Bytes the process wrote to stderr (its log). */
  stderrBytes = 0;
  private stderrTail = "";
  private stderrHead = "";
  private inspector: InspectorSession | undefined;
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;

  private constructor(
    readonly command: string,
    readonly child: ChildProcessWithoutNullStreams,
  ) {
    this.exited = new Promise((resolve) => child.once("exit", (code, signal) => resolve({ code, signal })));
    child.stderr.on("data", (chunk: Buffer) => {
      this.stderrBytes += chunk.length;
      const text = chunk.toString("utf8");
      if (this.stderrHead.length < KEPT_STDERR_CHARS) this.stderrHead += text.slice(0, KEPT_STDERR_CHARS - this.stderrHead.length);
      this.stderrTail = (this.stderrTail + text).slice(-KEPT_STDERR_CHARS);
    });
  }

  /** Starts `tau-gateway COMMAND ARGS`; resolves once the inspector is attached (and, for serve, once it listens). */
  static async start(command: string, args: string[], env: NodeJS.ProcessEnv = {}): Promise<{ process: GatewayProcess; baseUrl: string | undefined }> {
    const child = spawnCli([command, ...args], env, ["pipe", "pipe", "pipe"], ["--inspect=127.0.0.1:0"]) as ChildProcessWithoutNullStreams;
    const gateway = new GatewayProcess(command, child);
    // serve writes nothing to stdout; stdio commands' stdout is read by their client.
    if (command === "serve") child.stdout.resume();
    const inspectorUrl = await gateway.stderrMatch(INSPECTOR, "the inspector URL");
    gateway.inspector = await InspectorSession.connect(inspectorUrl);
    const baseUrl = command === "serve" ? await gateway.stderrMatch(LISTENING, "the listening line") : undefined;
    return { process: gateway, baseUrl };
  }

  get pid(): number {
    return this.child.pid!;
  }

  alive(): boolean {
    return this.child.exitCode === null && this.child.signalCode === null;
  }

  /** What the process wrote to stderr: its start and its most recent lines. */
  stderr(): string {
    if (this.stderrBytes <= KEPT_STDERR_CHARS) return this.stderrHead;
    return `${this.stderrHead}\n[… ${this.stderrBytes} bytes in all …]\n${this.stderrTail}`;
  }

  /** Resident set size now and at its peak, without collecting. */
  rss(): { rssBytes: number; peakRssBytes: number } {
    try {
      const status = readFileSync(`/proc/${this.pid}/status`, "utf8");
      const kib = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, "m").exec(status)?.[1] ?? 0) * 1024;
      return { rssBytes: kib("VmRSS"), peakRssBytes: kib("VmHWM") };
    } catch {
      return { rssBytes: 0, peakRssBytes: 0 };
    }
  }

  /** Collects garbage (twice: weak references and finalizers need a second pass) and reads memory. */
  async memory(): Promise<MemoryReading> {
    await this.inspector!.collectGarbage();
    await this.inspector!.collectGarbage();
    const heapUsedBytes = await this.inspector!.heapUsed();
    return { ...this.rss(), heapUsedBytes };
  }

  /**
   * Sends a signal to a process that should then end on its own: the inspector is detached first,
   * since node keeps a process whose work is done alive while a debugger is still attached.
   */
  signal(signal: NodeJS.Signals): void {
    this.inspector?.close();
    this.inspector = undefined;
    this.child.kill(signal);
  }

  /** Stops the process: `stdin` closed first (stdio commands end there), then SIGTERM, then SIGKILL. */
  async stop(graceMs = 5_000): Promise<{ code: number | null; signal: NodeJS.Signals | null; how: "stdin" | "SIGTERM" | "SIGKILL" }> {
    this.inspector?.close();
    const within = (ms: number) => Promise.race([this.exited, new Promise<undefined>((r) => setTimeout(() => r(undefined), ms).unref())]);
    if (!this.alive()) return { ...(await this.exited), how: "stdin" };
    this.child.stdin.end();
    let exit = await within(this.command === "serve" ? 0 : graceMs);
    if (exit) return { ...exit, how: "stdin" };
    this.child.kill("SIGTERM");
    exit = await within(graceMs);
    if (exit) return { ...exit, how: "SIGTERM" };
    this.child.kill("SIGKILL");
    return { ...(await this.exited), how: "SIGKILL" };
  }

  private stderrMatch(pattern: RegExp, what: string, timeoutMs = 60_000): Promise<string> {
    return new Promise((resolve, reject) => {
      let seen = "";
      const onData = (chunk: Buffer) => {
        seen += chunk.toString("utf8");
        const match = pattern.exec(seen);
        if (!match) return;
        done();
        resolve(match[1]!);
      };
      const onExit = () => {
        done();
        reject(new Error(`tau-gateway ${this.command} exited before printing ${what}; stderr:\n${seen}`));
      };
      const timer = setTimeout(() => {
        done();
        reject(new Error(`tau-gateway ${this.command} did not print ${what} within ${timeoutMs} ms; stderr:\n${seen}`));
      }, timeoutMs);
      const done = () => {
        clearTimeout(timer);
        this.child.stderr.off("data", onData);
        this.child.off("exit", onExit);
      };
      this.child.stderr.on("data", onData);
      this.child.once("exit", onExit);
    });
  }
}
