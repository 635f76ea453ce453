import { spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { findNginx, startNginx, type RunningNginx } from "./nginx.js";
import { builtCli, repoRoot, startProcess, type Started } from "./processes.js";

/**
 * What the benchmarks run against, each in its own process: the embedded Tau host
 * (`tau-gateway host`, no stream delay), the gateway (`tau-gateway serve --upstream ws://…` on that
 * host) and, when installed, nginx proxying WebSockets to the same host.
 */

export const HOST_READY = /tau host listening on (ws:\/\/\S+)/;
export const GATEWAY_READY = /tau-gateway listening on (http:\/\/\S+)/;

/** How to reach the gateway: its base URLs and the headers every request needs. */
export interface GatewayAccess {
  http: string;
  tau: string;
  rpc: string;
  headers: Record<string, string>;
}

/** Bearer-token auth, used when `serve --help` offers it; the token is made up per run. */
export interface GatewayAuth {
  env: NodeJS.ProcessEnv;
  headers: Record<string, string>;
  note: string;
}

let help: string | undefined;

/** `tau-gateway serve --help` of the build under test: which options it has decides how it is run. */
export function serveHelp(): string {
  help ??= spawnSync(process.execPath, [builtCli, "serve", "--help"], { cwd: repoRoot, encoding: "utf8" }).stdout ?? "";
  return help;
}

export function serveHasFlag(flag: string): boolean {
  return new RegExp(`^\\s*--${flag}\\b`, "m").test(serveHelp());
}

export function gatewayAuth(): GatewayAuth {
  if (!/TAU_GATEWAY_TOKEN\b/.test(serveHelp())) return { env: {}, headers: {}, note: "gateway without auth (serve offers no token)" };
  const token = randomBytes(24).toString("hex");
  return { env: { TAU_GATEWAY_TOKEN: token }, headers: { authorization: `Bearer ${token}` }, note: "gateway with bearer-token auth (TAU_GATEWAY_TOKEN)" };
}

export function startHost(extraArgs: string[] = []): Promise<Started> {
  // NODE_ENV=development or test would make the host schema-check everything it sends.
  return startProcess("tau host", { args: ["host", "--port", "0", "--stream-delay-ms", "0", ...extraArgs], env: { NODE_ENV: "production" }, ready: HOST_READY });
}

export interface GatewayStartOptions {
  upstream: string;
  auth: GatewayAuth;
  nodeFlags?: string[];
  extraArgs?: string[];
}

export async function startGateway(options: GatewayStartOptions): Promise<{ process: Started; access: GatewayAccess }> {
  const started = await startProcess("tau-gateway serve", {
    args: ["serve", "--port", "0", "--upstream", options.upstream, ...(options.extraArgs ?? [])],
    env: { ...options.auth.env, NODE_ENV: "production" },
    nodeFlags: options.nodeFlags,
    ready: GATEWAY_READY,
  });
  const http = started.match[1]!;
  const ws = http.replace(/^http/, "ws");
  return { process: started, access: { http, tau: `${ws}/tau`, rpc: `${ws}/rpc`, headers: options.auth.headers } };
}

export interface Stack {
  host: Started;
  hostUrl: string;
  gateway: Started;
  access: GatewayAccess;
  nginx: RunningNginx | undefined;
  /** Why there is no nginx, when there is none. */
  nginxNote: string | undefined;
  authNote: string;
  stop(): Promise<void>;
}

export async function startStack(options: { withNginx?: boolean } = {}): Promise<Stack> {
  const auth = gatewayAuth();
  const host = await startHost();
  const hostUrl = host.match[1]!;
  const stops: Array<() => Promise<void>> = [() => host.stop()];
  try {
    const gateway = await startGateway({ upstream: hostUrl, auth });
    stops.unshift(() => gateway.process.stop());
    let nginx: RunningNginx | undefined;
    let nginxNote: string | undefined;
    const binary = options.withNginx === false ? undefined : findNginx();
    if (options.withNginx === false) nginxNote = "nginx not requested";
    else if (!binary) nginxNote = "nginx is not installed: nginx rows skipped";
    else {
      try {
        nginx = await startNginx(binary, Number(new URL(hostUrl).port));
        stops.unshift(() => nginx!.stop());
      } catch (err) {
        nginxNote = `nginx rows skipped: ${(err as Error).message}`;
      }
    }
    return {
      host,
      hostUrl,
      gateway: gateway.process,
      access: gateway.access,
      nginx,
      nginxNote,
      authNote: auth.note,
      stop: async () => {
        for (const stop of stops) await stop().catch(() => undefined);
      },
    };
  } catch (err) {
    for (const stop of stops) await stop().catch(() => undefined);
    throw err;
  }
}
