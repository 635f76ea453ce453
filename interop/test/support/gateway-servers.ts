import { spawn, type ChildProcess } from "node:child_process";
import { join } from "node:path";
import { startRedis } from "../../../test/support/redis-server.js";
import { interopRoot } from "./gateway-process.js";

/**
 * Long-running `tau-gateway` processes from this checkout's sources for the interoperability
 * tests: `serve` gateways (alone, or as replicas on a Redis store in front of a `host`), and the
 * `--remote` relays editors spawn. Each runs in one process (node with tsx's loader), so killing
 * it drops its connections at once, as a crash or a closed laptop does.
 */

const repoRoot = join(interopRoot, "..");
const MAIN = join(repoRoot, "src", "cli", "main.ts");

export interface GatewayProcess {
  child: ChildProcess;
  stderr(): string;
  /** Kills it (SIGKILL) if it still runs; resolves once it exited. */
  kill(): Promise<void>;
}

/** `tau-gateway ARGS` with `env` added to this process's environment, stdin and stdout piped. */
export function tauGateway(args: string[], env: Record<string, string> = {}): GatewayProcess {
  const child = spawn(process.execPath, ["--import", "tsx", MAIN, ...args], { cwd: repoRoot, env: { ...process.env, ...env }, stdio: ["pipe", "pipe", "pipe"] });
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  let stderr = "";
  child.stderr!.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
  return {
    child,
    stderr: () => stderr,
    kill: async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
      await exited;
    },
  };
}

/** Resolves with the first group of `pattern` once the process's stderr shows it. */
export function printed(process: GatewayProcess, pattern: RegExp, what: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${what} did not start in time:\n${process.stderr()}`)), 60_000);
    const check = () => {
      const match = pattern.exec(process.stderr());
      if (!match) return;
      clearTimeout(timer);
      resolve(match[1]!);
    };
    process.child.stderr!.on("data", check);
    process.child.once("exit", () => {
      clearTimeout(timer);
      reject(new Error(`${what} exited:\n${process.stderr()}`));
    });
  });
}

export interface ServeGateway extends GatewayProcess {
  /** ws://HOST:PORT */
  url: string;
}

/** `tau-gateway serve --port 0 ARGS`, once it answers /readyz. */
export async function startServe(args: string[], env: Record<string, string>): Promise<ServeGateway> {
  const gateway = tauGateway(["serve", "--port", "0", ...args], env);
  const address = await printed(gateway, /tau-gateway listening on http:\/\/(\S+)/, "the gateway");
  const ready = Date.now() + 60_000;
  while ((await fetch(`http://${address}/readyz`).then((r) => r.status, () => 0)) !== 200) {
    if (Date.now() > ready) throw new Error(`the gateway at ${address} never became ready:\n${gateway.stderr()}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return { ...gateway, url: `ws://${address}` };
}

export interface Topology {
  /** Where the terminal UI, the editor's relay and the phone connect (ws://HOST:PORT each). */
  tui: string;
  editor: string;
  phone: string;
  /** Where a client that drops reconnects (another replica when there are two). */
  phoneAgain: string;
  editorAgain: string;
  tuiAgain: string;
  stop(): Promise<void>;
}

/** One `serve` gateway with its embedded host: every client on it. */
export async function oneGateway(env: Record<string, string>): Promise<Topology> {
  const gateway = await startServe([], env);
  const url = gateway.url;
  return { tui: url, editor: url, phone: url, phoneAgain: url, editorAgain: url, tuiAgain: url, stop: () => gateway.kill() };
}

/**
 * Two `serve` replicas on one Redis store in front of one `tau-gateway host` (the first replica
 * takes the host's lease): the terminal UI and the phone on the first, the editor on the second;
 * a client that drops comes back on the other replica, as a load balancer may send it.
 */
export async function twoReplicas(env: Record<string, string>): Promise<Topology> {
  const stops: Array<() => Promise<void>> = [];
  const stop = async () => {
    for (const step of stops.splice(0).reverse()) await step();
  };
  try {
    const redis = await startRedis();
    stops.push(() => redis.stop());
    const host = tauGateway(["host", "--port", "0"]);
    stops.push(() => host.kill());
    const hostUrl = await printed(host, /^tau host listening on (ws:\/\/\S+)$/m, "the Tau host");
    const replica = async () => {
      const gateway = await startServe(["--upstream", hostUrl, "--store", redis.url, "--store-lease-ms", "3000"], env);
      stops.push(() => gateway.kill());
      return gateway.url;
    };
    const first = await replica();
    const owns = Date.now() + 60_000;
    const metrics = { headers: { authorization: `Bearer ${env.TAU_GATEWAY_TOKEN}` } };
    const leases = () => fetch(`${first.replace("ws://", "http://")}/metrics`, metrics).then((r) => r.text()).then((text) => /^tau_gateway_store_leases_owned 1$/m.test(text), () => false);
    while (!(await leases())) {
      if (Date.now() > owns) throw new Error("the first replica never took the Tau host's lease");
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    const second = await replica();
    return { tui: first, phone: first, editor: second, phoneAgain: second, editorAgain: first, tuiAgain: second, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}
