import { randomBytes } from "node:crypto";
import { connect, type Socket } from "node:net";

/**
 * A WebSocket client that completes the upgrade and then goes silent: it reads nothing more and
 * answers nothing, not even the server's close frame — a client stuck in a long GC pause, a
 * suspended laptop, a peer gone without a FIN. `ended` settles once the server ends the connection.
 */
export interface StalledWebSocket {
  socket: Socket;
  /** Resolves when the TCP connection is closed by the other side (the socket resumes reading to see it). */
  ended(): Promise<void>;
}

export async function openStalledWebSocket(url: string, headers: Record<string, string> = {}): Promise<StalledWebSocket> {
  const { hostname, port, pathname, search } = new URL(url);
  const socket = connect(Number(port), hostname);
  const extra = Object.entries(headers)
    .map(([name, value]) => `${name}: ${value}\r\n`)
    .join("");
  socket.write(
    `GET ${pathname}${search} HTTP/1.1\r\nHost: ${hostname}:${port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n` +
      `Sec-WebSocket-Key: ${randomBytes(16).toString("base64")}\r\nSec-WebSocket-Version: 13\r\n${extra}\r\n`,
  );
  const closed = new Promise<void>((resolve) => socket.once("close", () => resolve()));
  socket.on("error", () => undefined);
  await new Promise<void>((resolve, reject) => {
    let head = "";
    const onData = (chunk: Buffer) => {
      head += chunk.toString("latin1");
      if (!head.includes("\r\n\r\n")) return;
      socket.off("data", onData);
      // From here on nothing is read: frames the server sends stay unread in the socket's buffers.
      socket.pause();
      if (head.startsWith("HTTP/1.1 101")) resolve();
      else reject(new Error(`upgrade refused: ${head.split("\r\n")[0]}`));
    };
    socket.on("data", onData);
    socket.once("close", () => reject(new Error("connection closed before the upgrade")));
  });
  return {
    socket,
    ended: () => {
      socket.resume();
      return closed;
    },
  };
}
