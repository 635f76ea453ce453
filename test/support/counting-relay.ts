import type { AddressInfo } from "node:net";
import WebSocket, { WebSocketServer } from "ws";

/**
 * A WebSocket relay in front of a real Tau host that counts the requests reaching the host, by
 * method, may rewrite what the host sends back (to make deltas fail to apply) and may hold it back
 * for a while (to keep requests open as long as a test needs). Messages are passed on in order in
 * both directions.
 */
export interface CountingRelay {
  /** ws://… of the relay; connect here instead of to the host. */
  url: string;
  /** Requests that reached the host with this method. */
  count(method: string): number;
  /** From now on, what the host sends waits in the relay (in order) until `release()`. */
  hold(): void;
  /** Passes on everything held and stops holding. */
  release(): void;
  close(): Promise<void>;
}

export interface CountingRelayOptions {
  /** Rewrites each parsed host → client message; the default passes it on unchanged. */
  fromHost?: (message: Record<string, any>) => Record<string, any>;
}

export async function startCountingRelay(hostUrl: string, options: CountingRelayOptions = {}): Promise<CountingRelay> {
  const counts = new Map<string, number>();
  const server = new WebSocketServer({ host: "127.0.0.1", port: 0 });
  await new Promise<void>((resolve) => server.once("listening", () => resolve()));
  const upstreams = new Set<WebSocket>();
  let holding = false;
  const held: Array<() => void> = [];

  server.on("connection", (client) => {
    const upstream = new WebSocket(hostUrl);
    upstreams.add(upstream);
    const waiting: string[] = [];
    upstream.on("open", () => {
      for (const text of waiting.splice(0)) upstream.send(text);
    });
    upstream.on("message", (data) => {
      const text = data.toString();
      const pass = () => client.send(options.fromHost ? JSON.stringify(options.fromHost(JSON.parse(text))) : text);
      if (holding) held.push(pass);
      else pass();
    });
    client.on("message", (data) => {
      const text = data.toString();
      const method = (JSON.parse(text) as { method?: unknown }).method;
      if (typeof method === "string") counts.set(method, (counts.get(method) ?? 0) + 1);
      if (upstream.readyState === WebSocket.OPEN) upstream.send(text);
      else waiting.push(text);
    });
    client.on("close", () => upstream.close());
    upstream.on("close", () => client.close());
    upstream.on("error", () => client.terminate());
    client.on("error", () => upstream.terminate());
  });

  return {
    url: `ws://127.0.0.1:${(server.address() as AddressInfo).port}`,
    count: (method) => counts.get(method) ?? 0,
    hold: () => void (holding = true),
    release() {
      holding = false;
      for (const pass of held.splice(0)) pass();
    },
    async close() {
      for (const upstream of upstreams) upstream.terminate();
      for (const client of server.clients) client.terminate();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
