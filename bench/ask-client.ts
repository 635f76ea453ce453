import type WebSocket from "ws";
import { closeBenchSocket, failPendingOnClose, openBenchSocket } from "./socket.js";

/**
 * A lean Ask JSON-RPC client for load generation. Events are counted straight from the raw frame
 * (the gateway serializes `{"jsonrpc":"2.0","method":"session/event",…}`), so a hundred
 * subscribers in one client process cost little more than reading their sockets; only responses
 * are parsed.
 */

const EVENT_MARKER = Buffer.from('"method":"session/event"');

export class BenchAskClient {
  private readonly pending = new Map<number, { resolve: (v: any) => void; reject: (e: Error) => void }>();
  private nextId = 0;
  /** Number of `session/event` notifications received. */
  events = 0;
  /** Called for each event frame with the raw bytes (kept unparsed). */
  onEvent: ((data: Buffer, receivedAt: number) => void) | undefined;

  private constructor(readonly socket: WebSocket) {
    socket.on("message", (data: Buffer) => this.receive(data));
    failPendingOnClose(socket, this.pending);
  }

  static async connect(url: string, headers: Record<string, string> = {}, timeoutMs = 15_000): Promise<BenchAskClient> {
    return new BenchAskClient(await openBenchSocket(url, headers, timeoutMs, "open"));
  }


  call<T = any>(method: string, params: object = {}): Promise<T> {
    const id = ++this.nextId;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      this.socket.send(JSON.stringify({ jsonrpc: "2.0", id, method, params }));
    });
  }

  close(): Promise<void> {
    return closeBenchSocket(this.socket);
  }


  private receive(data: Buffer): void {
    if (data.indexOf(EVENT_MARKER) !== -1) {
      this.events++;
      this.onEvent?.(data, performance.now());
      return;
    }
    const message = JSON.parse(data.toString("utf8"));
    const waiter = typeof message.id === "number" ? this.pending.get(message.id) : undefined;
    if (!waiter) return;
    this.pending.delete(message.id);
    if (message.error) waiter.reject(new Error(`${message.error.code} ${message.error.message}`));
    else waiter.resolve(message.result);
  }
}
