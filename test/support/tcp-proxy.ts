import { createConnection, createServer, type Server, type Socket } from "node:net";
import type { Cleanups } from "./cleanups.js";

/**
 * A TCP proxy on a free loopback port in front of `target`, for network faults between two real
 * parts. `blackhole()` stops carrying bytes either way while every connection stays open and new
 * ones are accepted and carry nothing: what is sent meanwhile is dropped for good (a middlebox
 * that lost the flow), or with `{ hold: true }` held and delivered in order on `heal()` (as TCP
 * retransmission would after a short outage); with `{ only: "fromClient" }` or `{ only: "fromTarget" }`
 * only that direction's bytes are dropped (a request that never arrives; an answer that never
 * comes back). `dropped()` settles when a chunk of the client's is next dropped (what it sent went
 * nowhere). `heal()` carries bytes again. `drop()` resets every
 * connection open now, both ways (a NAT or load balancer that forgot the flows); new ones are
 * carried as before. `restart()` is the proxy itself going down and coming back: every connection is
 * reset and the port refuses new ones until it listens again, on the same port, when the promise
 * settles. `connections` counts the connections accepted so far.
 */
export interface TcpProxy {
  port: number;
  blackhole(options?: { hold?: boolean; only?: "fromClient" | "fromTarget" }): void;
  dropped(): Promise<void>;
  drop(): void;
  readonly connections: number;
  heal(): void;
  restart(): Promise<void>;
  close(): Promise<void>;
}

export async function startTcpProxy(target: { host: string; port: number }, cleanups?: Cleanups): Promise<TcpProxy> {
  let blocked = false;
  let holding = false;
  let only: "fromClient" | "fromTarget" | undefined;
  const droppedWaiters: Array<() => void> = [];
  const held: Array<() => void> = [];
  const sockets = new Set<Socket>();
  let accepted = 0;
  const carry = (from: Socket, to: Socket, direction: "fromClient" | "fromTarget") =>
    from.on("data", (chunk: Buffer) => {
      if (!blocked || (only !== undefined && only !== direction)) to.write(chunk);
      else if (holding) held.push(() => to.write(chunk));
      else if (direction === "fromClient") for (const wake of droppedWaiters.splice(0)) wake();
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
    carry(client, upstream, "fromClient");
    carry(upstream, client, "fromTarget");
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as { port: number }).port;
  const proxy: TcpProxy = {
    port,
    blackhole: ({ hold = false, only: direction } = {}) => {
      blocked = true;
      holding = hold;
      only = direction;
    },
    dropped: () => new Promise((resolve) => droppedWaiters.push(resolve)),
    drop: () => {
      for (const socket of sockets) socket.resetAndDestroy();
    },
    get connections() {
      return accepted;
    },
    heal: () => {
      blocked = false;
      only = undefined;
      for (const deliver of held.splice(0)) deliver();
    },
    restart: async () => {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      for (const socket of sockets) socket.resetAndDestroy();
      await closed;
      await new Promise<void>((resolve) => server.listen(port, "127.0.0.1", resolve));
    },
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  cleanups?.push(() => proxy.close());
  return proxy;
}
