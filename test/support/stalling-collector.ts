import { createServer, type Server, type Socket } from "node:net";
import type { AddressInfo } from "node:net";

/**
 * An OTLP collector that never answers in full, on a real loopback TCP server: `silent` reads the
 * export and says nothing; `drip` answers a status line and headers promising a body, then one byte
 * of it every `dripMs`, for ever (a socket that is never idle, so an idle timeout never fires). It
 * counts the exporter's sockets, open now and at most at once, to tell whether any is leaked.
 */

export interface StallingCollector {
  readonly url: string;
  /** Sockets open now, and the most open at once. */
  readonly open: number;
  readonly mostOpen: number;
  /** Connections accepted in all. */
  readonly accepted: number;
  /** Resolves once `count` connections have been accepted. */
  accepts(count: number): Promise<void>;
  /** Resolves once no socket is open. */
  allClosed(): Promise<void>;
  close(): Promise<void>;
}

export async function startStallingCollector(mode: "silent" | "drip", dripMs = 20): Promise<StallingCollector> {
  const sockets = new Set<Socket>();
  const waiters = new Set<() => void>();
  let accepted = 0;
  let mostOpen = 0;
  const wake = () => {
    for (const w of [...waiters]) w();
  };
  const until = (done: () => boolean) =>
    new Promise<void>((resolve) => {
      const check = () => {
        if (!done()) return;
        waiters.delete(check);
        resolve();
      };
      waiters.add(check);
      check();
    });
  const server: Server = createServer((socket) => {
    accepted++;
    sockets.add(socket);
    mostOpen = Math.max(mostOpen, sockets.size);
    socket.on("error", () => undefined);
    let timer: NodeJS.Timeout | undefined;
    socket.once("data", () => {
      if (mode !== "drip") return;
      socket.write("HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 1000000\r\n\r\n");
      timer = setInterval(() => socket.write(" "), dripMs);
    });
    socket.on("close", () => {
      clearInterval(timer);
      sockets.delete(socket);
      wake();
    });
    wake();
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    get open() {
      return sockets.size;
    },
    get mostOpen() {
      return mostOpen;
    },
    get accepted() {
      return accepted;
    },
    accepts: (count) => until(() => accepted >= count),
    allClosed: () => until(() => sockets.size === 0),
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}
