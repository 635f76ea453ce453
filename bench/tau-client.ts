import type WebSocket from "ws";
import { closeBenchSocket, failPendingOnClose, openBenchSocket } from "./socket.js";

/**
 * A lean Tau v18 client for load generation: one WebSocket, `ready` awaited, requests matched to
 * responses by id. It checks nothing beyond what it needs (the test suites validate; a benchmark
 * client must stay cheap so it measures the server, not itself).
 */

export interface TauResponse {
  id: string;
  ok: boolean;
  result?: any;
  error?: { code: string; message: string };
}

/** Returns true when it has dealt with the message: it is then not parsed (a load generator reading many frames). */
export type RawListener = (data: Buffer, receivedAt: number) => boolean | void;

export class BenchTauClient {
  private readonly pending = new Map<string, { resolve: (r: TauResponse) => void; reject: (e: Error) => void }>();
  private nextId = 0;
  /** Called for every message after `ready`, before it is parsed; true from it skips the parse. */
  onRaw: RawListener | undefined;
  /** Called for every parsed non-response message (deltas and other stream messages). */
  onStream: ((message: any, receivedAt: number) => void) | undefined;

  private constructor(readonly socket: WebSocket) {
    socket.on("message", (data: Buffer) => this.receive(data));
    failPendingOnClose(socket, this.pending);
  }

  static async connect(url: string, headers: Record<string, string> = {}, timeoutMs = 15_000): Promise<BenchTauClient> {
    return new BenchTauClient(await openBenchSocket(url, headers, timeoutMs, "tau-ready"));
  }


  request(method: string, params: object): Promise<TauResponse> {
    const id = `b${++this.nextId}`;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      this.socket.send(`{"version":18,"type":"request","id":"${id}","method":"${method}","params":${JSON.stringify(params)}}`);
    });
  }

  /** Like request, but rejects on an error response. */
  async call<T = any>(method: string, params: object): Promise<T> {
    const response = await this.request(method, params);
    if (!response.ok) throw new Error(`${method}: ${response.error?.code} ${response.error?.message}`);
    return response.result as T;
  }

  close(): Promise<void> {
    return closeBenchSocket(this.socket);
  }


  private receive(data: Buffer): void {
    const at = performance.now();
    if (this.onRaw?.(data, at) === true) return;
    const message = JSON.parse(data.toString("utf8"));
    if (message.type === "response") {
      const waiter = this.pending.get(message.id);
      if (waiter) {
        this.pending.delete(message.id);
        waiter.resolve(message as TauResponse);
      }
      return;
    }
    this.onStream?.(message, at);
  }
}
