import type { AddressInfo } from "node:net";
import WebSocket, { WebSocketServer } from "ws";

/**
 * A minimal scripted Tau peer on a real `ws` server, for behaviour the embedded host never shows:
 * another protocol version (no v17 host exists here) and invalid server messages. It sends the
 * given `ready`, records every message and close it receives, and lets the test answer requests.
 */

export interface FakeTauPeer {
  url: string;
  port: number;
  /** Every text message received from clients, in order. */
  readonly received: string[];
  /** Close codes/reasons of client connections, in order. */
  readonly closes: Array<{ code: number; reason: string }>;
  readonly sockets: WebSocket[];
  /** Resolves with the next close of a client connection. */
  nextClose(): Promise<{ code: number; reason: string }>;
  close(): Promise<void>;
}

export interface FakeTauPeerOptions {
  ready?: Record<string, unknown>;
  /** Called with each parsed request; the default answers `initialize` and nothing else. */
  onRequest?: (request: any, socket: WebSocket) => void;
}

export const V18_READY = { version: 18, type: "ready", methods: ["initialize", "session.list"] };

/** A valid v18 success response. */
export const success = (id: string, result: unknown) => JSON.stringify({ version: 18, type: "response", id, ok: true, result });

export function answerInitialize(request: any, socket: WebSocket): boolean {
  if (request.method !== "initialize") return false;
  socket.send(success(request.id, { protocolVersion: 18, methods: V18_READY.methods, alreadyInitialized: false }));
  return true;
}

export async function startFakeTauPeer(options: FakeTauPeerOptions = {}): Promise<FakeTauPeer> {
  const server = new WebSocketServer({ host: "127.0.0.1", port: 0 });
  await new Promise<void>((resolve) => server.once("listening", () => resolve()));
  const port = (server.address() as AddressInfo).port;
  const received: string[] = [];
  const closes: Array<{ code: number; reason: string }> = [];
  const sockets: WebSocket[] = [];
  let closeWaiters: Array<(c: { code: number; reason: string }) => void> = [];

  server.on("connection", (socket) => {
    sockets.push(socket);
    socket.send(JSON.stringify(options.ready ?? V18_READY));
    socket.on("message", (data) => {
      const text = data.toString();
      received.push(text);
      let request: any;
      try {
        request = JSON.parse(text);
      } catch {
        return;
      }
      if (options.onRequest) options.onRequest(request, socket);
      else answerInitialize(request, socket);
    });
    socket.on("close", (code, reason) => {
      const info = { code, reason: reason.toString() };
      closes.push(info);
      const waiters = closeWaiters;
      closeWaiters = [];
      for (const w of waiters) w(info);
    });
  });

  return {
    url: `ws://127.0.0.1:${port}`,
    port,
    received,
    closes,
    sockets,
    nextClose: () => new Promise((resolve) => closeWaiters.push(resolve)),
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.terminate();
        server.close(() => resolve());
      }),
  };
}
