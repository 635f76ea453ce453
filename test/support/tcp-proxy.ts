import { createConnection, createServer, type Server, type Socket } from "node:net";
import type { Cleanups } from "./cleanups.js";

/**
 * A TCP proxy on a free loopback port in front of `target`, for network faults between two real
 * parts. `blackhole()` stops carrying bytes either way while every connection stays open and new
 * ones are accepted and carry nothing: what is sent meanwhile is dropped for good (a middlebox
 * that lost the flow), or with `{ hold: true }` held and delivered in order on `heal()` (as TCP
 * retransmission would after a short outage). `heal()` carries bytes again. `drop()` resets every
 * connection open now, both ways (a NAT or load balancer that forgot the flows); new ones are
 * carried as before. `connections` counts the connections accepted so far.
 */
export interface TcpProxy {
  port: number;
  blackhole(options?: { hold?: boolean }): void;
  drop(): void;
  readonly connections: number;
  heal(): void;
  close(): Promise<void>;
}

export async function startTcpProxy(target: { host: string; port: number }, cleanups?: Cleanups): Promise<TcpProxy> {
  let blocked = false;
  let holding = false;
  const held: Array<() => void> = [];
  const sockets = new Set<Socket>();
  let accepted = 0;
  const carry = (from: Socket, to: Socket) =>
    from.on("data", (chunk: Buffer) => {
      if (!blocked) to.write(chunk);
      else if (holding) held.push(() => to.write(chunk));
    });
  const server: Server = createServer((client) => {
    accepted++;
    const upstream = createConnection(target);
    for (const socket of [client, upstream]) {
      sockets.add(socket);
      socket.on("error", () => undefined);
      socket.on("close", () => {
        sockets.delete(socket);
        client.destroy();
        upstream.destroy();
      });
    }
    carry(client, upstream);
    carry(upstream, client);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as { port: number }).port;
  const proxy: TcpProxy = {
    port,
    blackhole: ({ hold = false } = {}) => {
      blocked = true;
      holding = hold;
    },
    drop: () => {
      for (const socket of sockets) socket.resetAndDestroy();
    },
    get connections() {
      return accepted;
    },
    heal: () => {
      blocked = false;
      for (const deliver of held.splice(0)) deliver();
    },
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  cleanups?.push(() => proxy.close());
  return proxy;
}
