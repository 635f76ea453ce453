import WebSocket from "ws";

/**
 * A minimal Chrome DevTools Protocol client for a gateway process started with `--inspect`: the
 * only way to run a full garbage collection in another process and read its heap, so "memory
 * returns near baseline" compares live objects rather than whatever the collector left lying around.
 */
export class InspectorSession {
  private nextId = 1;
  private readonly waiting = new Map<number, { resolve: (v: any) => void; reject: (e: Error) => void }>();

  private constructor(private readonly socket: WebSocket) {
    socket.on("message", (data) => {
      const message = JSON.parse(data.toString()) as { id?: number; result?: unknown; error?: { message: string } };
      const waiter = message.id === undefined ? undefined : this.waiting.get(message.id);
      if (!waiter) return;
      this.waiting.delete(message.id!);
      if (message.error) waiter.reject(new Error(message.error.message));
      else waiter.resolve(message.result);
    });
    socket.on("close", () => {
      for (const w of this.waiting.values()) w.reject(new Error("inspector connection closed"));
      this.waiting.clear();
    });
    socket.on("error", () => undefined);
  }

  static connect(url: string): Promise<InspectorSession> {
    return new Promise((resolve, reject) => {
      const socket = new WebSocket(url);
      socket.once("open", () => resolve(new InspectorSession(socket)));
      socket.once("error", reject);
    });
  }

  private call<T>(method: string, params: Record<string, unknown> = {}): Promise<T> {
    const id = this.nextId++;
    return new Promise<T>((resolve, reject) => {
      this.waiting.set(id, { resolve, reject });
      this.socket.send(JSON.stringify({ id, method, params }));
    });
  }

  /** A full, blocking garbage collection in the inspected process. */
  async collectGarbage(): Promise<void> {
    await this.call("HeapProfiler.collectGarbage");
  }

  /** Bytes of live JavaScript heap. */
  async heapUsed(): Promise<number> {
    const usage = await this.call<{ usedSize: number }>("Runtime.getHeapUsage");
    return usage.usedSize;
  }

  close(): void {
    this.socket.close();
  }
}
