import type { AddressInfo } from "node:net";
import WebSocket, { WebSocketServer } from "ws";
import { formatIssue } from "../../../src/validation/issues.js";
import { ProtocolValidators } from "../../../src/validation/validator.js";

/**
 * A Tau host as the gateway sees it, with a witness in between: a real WebSocket server that
 * relays every connection to the embedded host (and back) unchanged, and checks every message the
 * gateway sends upstream against the registry's Tau v18 schema. Whatever the clients throw at the
 * gateway, nothing invalid may come out of its other side; each violation is recorded with the
 * message that caused it.
 */

export interface UpstreamTally {
  connections: number;
  /** Messages the gateway sent upstream. */
  messages: number;
  /** Upstream requests by method (e.g. to see a request the gateway repeats on its own). */
  byMethod: Map<string, number>;
  /** Total violations, and the first few in full. */
  violationCount: number;
  violations: string[];
}

export interface RecordingUpstream {
  /** ws://127.0.0.1:PORT — what the gateway is given as `--upstream`. */
  url: string;
  readonly tally: UpstreamTally;
  /** Upstream requests seen so far (all methods). */
  requests(method?: string): number;
  close(): Promise<void>;
}

const KEPT_VIOLATIONS = 20;
const SHOWN_CHARS = 600;

export async function startRecordingUpstream(hostUrl: string): Promise<RecordingUpstream> {
  const schema = ProtocolValidators.shared().get("tau", 18);
  const server = new WebSocketServer({ host: "127.0.0.1", port: 0, maxPayload: 64 * 1024 * 1024 });
  await new Promise<void>((resolve) => server.once("listening", () => resolve()));
  const tally: UpstreamTally = { connections: 0, messages: 0, byMethod: new Map(), violationCount: 0, violations: [] };
  const pairs = new Set<{ gateway: WebSocket; host: WebSocket }>();

  const violation = (what: string, text: string) => {
    tally.violationCount++;
    if (tally.violations.length < KEPT_VIOLATIONS) tally.violations.push(`${what}: ${text.slice(0, SHOWN_CHARS)}${text.length > SHOWN_CHARS ? "…" : ""}`);
  };

  const inspect = (data: WebSocket.RawData, isBinary: boolean) => {
    tally.messages++;
    const text = Buffer.isBuffer(data) ? data.toString("utf8") : Buffer.concat(data as Buffer[]).toString("utf8");
    if (isBinary) return violation("binary frame sent upstream", text);
    let message: unknown;
    try {
      message = JSON.parse(text);
    } catch {
      return violation("non-JSON message sent upstream", text);
    }
    const method = typeof (message as { method?: unknown })?.method === "string" ? (message as { method: string }).method : "(none)";
    tally.byMethod.set(method, (tally.byMethod.get(method) ?? 0) + 1);
    const checked = schema.message("client", message);
    if (!checked.ok) violation(`invalid ${method} request sent upstream (${checked.issues.slice(0, 3).map(formatIssue).join("; ")})`, text);
  };

  server.on("connection", (gateway, request) => {
    tally.connections++;
    const host = new WebSocket(`${hostUrl}${request.url ?? ""}`, { maxPayload: 64 * 1024 * 1024 });
    const pair = { gateway, host };
    pairs.add(pair);
    // What the gateway sends before the host connection is open waits here, in order.
    const early: Array<{ data: WebSocket.RawData; isBinary: boolean }> = [];
    gateway.on("message", (data, isBinary) => {
      inspect(data, isBinary);
      if (host.readyState === WebSocket.OPEN) host.send(data, { binary: isBinary });
      else early.push({ data, isBinary });
    });
    host.on("open", () => {
      for (const m of early.splice(0)) host.send(m.data, { binary: m.isBinary });
    });
    host.on("message", (data, isBinary) => {
      if (gateway.readyState === WebSocket.OPEN) gateway.send(data, { binary: isBinary });
    });
    const closeOther = (other: WebSocket, code: number, reason: Buffer) => {
      pairs.delete(pair);
      if (other.readyState === WebSocket.OPEN || other.readyState === WebSocket.CONNECTING) {
        // 1005/1006 describe a close without a frame; they cannot be sent on.
        if (code === 1005 || code === 1006) other.terminate();
        else other.close(code, reason);
      }
    };
    gateway.on("close", (code, reason) => closeOther(host, code, reason));
    host.on("close", (code, reason) => closeOther(gateway, code, reason));
    gateway.on("error", () => undefined);
    host.on("error", () => gateway.terminate());
  });

  return {
    url: `ws://127.0.0.1:${(server.address() as AddressInfo).port}`,
    tally,
    requests: (method) => (method === undefined ? [...tally.byMethod.values()].reduce((a, b) => a + b, 0) : (tally.byMethod.get(method) ?? 0)),
    close: () =>
      new Promise<void>((resolve) => {
        for (const { gateway, host } of pairs) {
          gateway.terminate();
          host.terminate();
        }
        server.close(() => resolve());
      }),
  };
}
