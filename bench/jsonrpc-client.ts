import type WebSocket from "ws";
import { closeBenchSocket, failPendingOnClose, openBenchSocket } from "./socket.js";

/**
 * A lean JSON-RPC client over WebSocket for load generation in the Codex app-server and ACP
 * dialects (Ask has its own, ask-client.ts). A frame holding `streamMarker` (the streamed text's
 * notification, nearly every frame of a turn) is counted and handed over as raw bytes, unparsed,
 * so a hundred subscribers in one client process cost little more than reading their sockets;
 * other frames are parsed: notifications are counted and handed over too, responses settle calls.
 */

export class BenchJsonRpcClient {
  private readonly pending = new Map<number, { resolve: (v: any) => void; reject: (e: Error) => void }>();
  private nextId = 0;
  /** Notifications received. */
  notifications = 0;
  /** Called for each notification with the raw bytes (kept unparsed). */
  onNotification: ((data: Buffer, receivedAt: number) => void) | undefined;

  private constructor(
    readonly socket: WebSocket,
    /** Sent with every request (ACP wants it; a Codex app-server client leaves it out). */
    private readonly jsonrpc: boolean,
    private readonly streamMarker: Buffer,
  ) {
    socket.on("message", (data: Buffer) => this.receive(data));
    failPendingOnClose(socket, this.pending);
  }

  static async connect(url: string, options: { headers?: Record<string, string>; jsonrpc: boolean; streamMarker: Buffer }): Promise<BenchJsonRpcClient> {
    return new BenchJsonRpcClient(await openBenchSocket(url, options.headers ?? {}, 15_000, "open"), options.jsonrpc, options.streamMarker);
  }

  call<T = any>(method: string, params: object = {}): Promise<T> {
    const id = ++this.nextId;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      this.socket.send(JSON.stringify({ ...(this.jsonrpc ? { jsonrpc: "2.0" } : {}), id, method, params }));
    });
  }

  close(): Promise<void> {
    return closeBenchSocket(this.socket);
  }

  private receive(data: Buffer): void {
    if (data.indexOf(this.streamMarker) !== -1) {
      this.notifications++;
      this.onNotification?.(data, performance.now());
      return;
    }
    const message = JSON.parse(data.toString("utf8"));
    // A notification (a server request, none expected here, is counted with them and left unanswered).
    if (typeof message.method === "string") {
      this.notifications++;
      this.onNotification?.(data, performance.now());
      return;
    }
    const waiter = typeof message.id === "number" ? this.pending.get(message.id) : undefined;
    if (!waiter) return;
    this.pending.delete(message.id);
    if (message.error) waiter.reject(new Error(`${message.error.code} ${message.error.message}`));
    else waiter.resolve(message.result);
  }
}
