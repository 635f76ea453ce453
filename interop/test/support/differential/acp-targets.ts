import { spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Readable, Transform, Writable } from "node:stream";
import { interopRoot } from "../gateway-process.js";
import { codexHome, TAU_GATEWAY_BUNDLE, type CodexRelease } from "./codex-targets.js";
import { startMockResponses } from "./mock-responses.js";

/**
 * The two ACP agents of the harness: codex-acp (the ACP face of Codex, spawning the real
 * `codex app-server` on the mock model) as the reference, and `tau-gateway acp` on its embedded
 * host. Each is one process, spoken to as an editor spawns it; every line both ways is logged.
 */

const CODEX_ACP = join(interopRoot, "node_modules", "@agentclientprotocol", "codex-acp", "dist", "index.js");

export interface AcpAgent {
  name: string;
  cwd: string;
  /**
   * The session mode in which the agent asks the user before every command: codex-acp's default
   * ("agent") has Codex's automatic reviewer decide first, which the gateway has no counterpart for.
   */
  askingMode: string;
  /** The agent's stdio as web streams, for the ACP SDK's ndJsonStream. */
  output: ReadableStream<Uint8Array>;
  input: WritableStream<Uint8Array>;
  log: Array<{ direction: "in" | "out"; message: Record<string, any> }>;
  close(): Promise<void>;
}

/** A transform that hands every complete line passing through to `onLine`. */
function tap(onLine: (line: string) => void): Transform {
  let rest = "";
  return new Transform({
    transform(chunk: Buffer, _encoding, done) {
      rest += chunk.toString("utf8");
      const lines = rest.split("\n");
      rest = lines.pop()!;
      for (const line of lines) if (line.trim()) onLine(line);
      done(null, chunk);
    },
  });
}

function agentProcess(name: string, askingMode: string, command: string, args: string[], cwd: string, env: NodeJS.ProcessEnv, cleanup: () => Promise<void>): AcpAgent {
  const child = spawn(command, args, { cwd, env, stdio: ["pipe", "pipe", "pipe"] });
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  child.stderr.resume();
  child.stdin.on("error", () => undefined);
  const log: AcpAgent["log"] = [];
  const parse = (direction: "in" | "out") => (line: string) => {
    try {
      log.push({ direction, message: JSON.parse(line) });
    } catch {
      log.push({ direction, message: { unparsed: line } });
    }
  };
  const fromAgent = child.stdout.pipe(tap(parse("in")));
  const toAgent = tap(parse("out"));
  toAgent.pipe(child.stdin);
  return {
    name,
    cwd,
    askingMode,
    output: Readable.toWeb(fromAgent) as ReadableStream<Uint8Array>,
    input: Writable.toWeb(toAgent) as WritableStream<Uint8Array>,
    log,
    close: async () => {
      if (child.exitCode === null && child.signalCode === null) {
        child.stdin.end();
        const timer = setTimeout(() => child.kill("SIGKILL"), 5_000);
        await exited;
        clearTimeout(timer);
      }
      await cleanup();
    },
  };
}

function runDir(prefix: string) {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), prefix)));
  const cwd = join(dir, "work");
  const home = join(dir, "home");
  mkdirSync(cwd, { recursive: true });
  mkdirSync(home, { recursive: true });
  return { dir, cwd, home };
}

/** codex-acp with CODEX_PATH = the real codex of `release`, on a fresh mock model and CODEX_HOME. */
export async function acpReference(release: CodexRelease): Promise<AcpAgent> {
  const paths = runDir("tau-diff-codex-acp-");
  const mock = await startMockResponses();
  codexHome(paths.home, mock);
  const env = { ...process.env, CODEX_PATH: release.binary, CODEX_HOME: paths.home, HOME: paths.home, RUST_LOG: "error" };
  return agentProcess("codex-acp", "workspace-write", process.execPath, [CODEX_ACP], paths.cwd, env, async () => {
    await mock.close();
    rmSync(paths.dir, { recursive: true, force: true });
  });
}

/** `tau-gateway acp` (the built bundle) on its embedded host, with the command tool echo-args. */
export async function acpTau(): Promise<AcpAgent> {
  const paths = runDir("tau-diff-acp-");
  const toolsFile = join(paths.dir, "tools.json");
  writeFileSync(toolsFile, JSON.stringify({ tools: [{ name: "echo-args", description: "Prints the JSON arguments it was given.", parameters: { type: "object" }, command: "cat" }] }));
  const env = { ...process.env, HOME: paths.home, TAU_GATEWAY_TOOLS_CONFIG: toolsFile, TAU_GATEWAY_INTERACTION_TIMEOUT_MS: "60000" };
  return agentProcess("tau-gateway acp", "on_request", process.execPath, [TAU_GATEWAY_BUNDLE, "acp"], paths.cwd, env, async () => rmSync(paths.dir, { recursive: true, force: true }));
}
