import WebSocket from "ws";

/** What both benchmark clients share about their WebSocket: opening it, failing waiters on close, closing it. */

/**
 * Opens a WebSocket without compression. `until: "open"` resolves on the upgrade; `"tau-ready"`
 * waits for Tau's `ready`, which must be the first message.
 */
export function openBenchSocket(url: string, headers: Record<string, string>, timeoutMs: number, until: "open" | "tau-ready"): Promise<WebSocket> {
  return new Promise((resolve, reject) => {
    const socket = new WebSocket(url, { headers, perMessageDeflate: false });
    const timer = setTimeout(() => {
      socket.terminate();
      reject(new Error(`${url}: ${until === "open" ? "not open" : "no ready message"} within ${timeoutMs} ms`));
    }, timeoutMs);
    const settle = (error?: Error) => {
      clearTimeout(timer);
      if (error) reject(error);
      else resolve(socket);
    };
    if (until === "open") {
      socket.once("open", () => settle());
      socket.once("unexpected-response", (_req, res) => settle(new Error(`${url}: HTTP ${res.statusCode} instead of a WebSocket`)));
    } else {
      socket.once("message", (data: Buffer) => {
        const first = JSON.parse(data.toString("utf8")) as { type?: string };
        settle(first.type === "ready" ? undefined : new Error(`${url}: first message was ${data.toString("utf8").slice(0, 200)}`));
      });
      socket.once("close", (code, reason) => settle(new Error(`${url}: closed before ready (${code} ${reason.toString()})`)));
    }
    socket.once("error", (err) => settle(err));
  });
}

/** Rejects every request still waiting when the connection closes. */
export function failPendingOnClose(socket: WebSocket, pending: Map<unknown, { reject: (e: Error) => void }>): void {
  socket.on("close", () => {
    const error = new Error("connection closed");
    for (const p of pending.values()) p.reject(error);
    pending.clear();
  });
}

/** A normal close, or a terminate when the peer does not answer within 2 s. */
export function closeBenchSocket(socket: WebSocket): Promise<void> {
  if (socket.readyState === WebSocket.CLOSED) return Promise.resolve();
  return new Promise((resolve) => {
    socket.once("close", () => resolve());
    socket.close(1000);
    setTimeout(() => {
      socket.terminate();
      resolve();
    }, 2_000).unref();
  });
}
