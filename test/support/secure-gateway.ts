import type { IncomingHttpHeaders } from "node:http";
import { Writable } from "node:stream";
import WebSocket from "ws";
import { buildGateway } from "../../src/gateway/app.js";
import type { OriginAllowlist } from "../../src/gateway/auth/origins.js";
import type { TokenRegistry } from "../../src/gateway/auth/tokens.js";
import type { ApprovalPolicy, CommandToolConfig } from "../../src/bridge/interactions/index.js";
import { listenOnEmbeddedStack, type EmbeddedStackGateway } from "./gateway.js";

/**
 * A gateway with its front-door settings (tokens, allowed origins, trusted proxies), put together
 * as `tau-gateway serve` does — embedded host, bridge stack, `/rpc`, `/` and `/acp` with the request's tenant — on
 * a free loopback port, with every log line it writes kept for inspection.
 */

export interface SecureGatewayOptions {
  tokens?: TokenRegistry;
  allowedOrigins?: OriginAllowlist;
  trustProxy?: boolean | string[];
  /** Protects the embedded host; the gateway uses it for both of its upstream paths. */
  upstreamToken?: string;
  /** The operator's command tools (each asks for approval). */
  commandTools?: CommandToolConfig[];
  /** --approval-policy, read, and --audit DIR (default: neither). */
  approvalPolicy?: ApprovalPolicy;
  auditDir?: string;
}

export interface SecureGateway extends EmbeddedStackGateway {
  /** ws://127.0.0.1:PORT + path */
  wsUrl(path: string): string;
  /** Every JSON log line written so far (level trace). */
  logText(): string;
  /** Every line the bridge stack logged so far (its messages, with their fields as JSON). */
  bridgeLog(): string[];
}

export async function startSecureGateway(options: SecureGatewayOptions = {}): Promise<SecureGateway> {
  let logs = "";
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      logs += chunk.toString("utf8");
      done();
    },
  });
  // Tenants' workspace roots travel with the tokens, as `serve` passes them.
  const bridgeLines: string[] = [];
  const settings = {
    cwdPrefix: "secure-gateway-",
    eventRetention: 1000,
    upstreamToken: options.upstreamToken,
    tenantWorkspaceRoots: options.tokens?.tenantWorkspaceRoots(),
    commandTools: options.commandTools,
    approvalPolicy: options.approvalPolicy,
    auditDir: options.auditDir,
    log: (level: string, message: string, fields?: Record<string, unknown>) => void bridgeLines.push(`${level} ${message} ${JSON.stringify(fields ?? {})}`),
  };
  const gateway = await listenOnEmbeddedStack(settings, (stack) =>
    buildGateway({
      tauUpstream: { url: stack.url!, token: options.upstreamToken },
      upstream: stack.upstream!,
      dialects: stack.gatewayDialects({ jsonrpcMember: "include" }),
      logger: { level: "trace", stream },
      tokens: options.tokens,
      allowedOrigins: options.allowedOrigins,
      trustProxy: options.trustProxy,
      receipts: stack.receipts,
      roles: stack.core,
    }),
  );
  return { ...gateway, wsUrl: (path) => `${gateway.baseUrl.replace("http://", "ws://")}${path}`, logText: () => logs, bridgeLog: () => bridgeLines };
}

export type UpgradeOutcome = { opened: true; socket: WebSocket } | { opened: false; status: number; headers: IncomingHttpHeaders; body: string };

/** Attempts a WebSocket upgrade; reports the HTTP answer when the server refuses it. An opened socket is the caller's to close. */
export function tryUpgrade(url: string, headers: Record<string, string> = {}): Promise<UpgradeOutcome> {
  return new Promise((resolve, reject) => {
    const socket = new WebSocket(url, { headers });
    socket.once("open", () => resolve({ opened: true, socket }));
    socket.once("unexpected-response", (_request, response) => {
      let body = "";
      response.setEncoding("utf8");
      response.on("data", (chunk: string) => (body += chunk));
      response.on("end", () => {
        resolve({ opened: false, status: response.statusCode ?? 0, headers: response.headers, body });
        socket.terminate();
      });
    });
    socket.once("error", (err) => reject(err));
  });
}
