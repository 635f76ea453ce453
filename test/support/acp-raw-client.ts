import WebSocket from "ws";

/**
 * An ACP client that sends exactly the frames a test writes (malformed ones included) on a
 * WebSocket, keeps every message the agent sends, and answers the agent's requests with what the
 * test scripts (by default: a permission request's first option; `undefined` leaves it unanswered).
 */
export class RawAcpClient {
  /** Every message the agent sent, parsed, in arrival order. */
  readonly received: any[] = [];
  /** Every message sent to the agent that was JSON. */
  readonly sent: unknown[] = [];
  private nextId = 1;
  private readonly waiters = new Set<{ match: (m: any) => boolean; resolve: (m: any) => void }>();
  answer: (request: any) => unknown = (request) => ({ outcome: { outcome: "selected", optionId: request.params.options[0].optionId } });

  private constructor(readonly socket: WebSocket) {
    socket.on("message", (data) => {
      const message = JSON.parse(data.toString());
      this.received.push(message);
      if (typeof message.method === "string" && "id" in message) {
        const result = this.answer(message);
        if (result !== undefined) this.send({ jsonrpc: "2.0", id: message.id, result });
      }
      for (const waiter of [...this.waiters]) {
        if (waiter.match(message)) {
          this.waiters.delete(waiter);
          waiter.resolve(message);
        }
      }
    });
  }

  static connect(url: string, headers: Record<string, string> = {}): Promise<RawAcpClient> {
    return new Promise((resolve, reject) => {
      const socket = new WebSocket(url, { headers });
      socket.once("open", () => resolve(new RawAcpClient(socket)));
      socket.once("error", reject);
    });
  }

  /** Sends a frame as is (text), or an object as JSON. */
  send(frame: string | object): void {
    const text = typeof frame === "string" ? frame : JSON.stringify(frame);
    try {
      this.sent.push(JSON.parse(text));
    } catch {
      // not JSON: nothing to record
    }
    this.socket.send(text);
  }

  /** Sends a request and resolves with the agent's response to it (result or error). */
  request(method: string, params?: unknown): Promise<any> {
    const id = this.nextId++;
    const answered = this.next((m) => m.id === id && !("method" in m));
    this.send({ jsonrpc: "2.0", id, method, ...(params === undefined ? {} : { params }) });
    return answered;
  }

  /** The first message (already received or still to come) that `match` accepts. */
  next(match: (m: any) => boolean, timeoutMs = 20_000): Promise<any> {
    const found = this.received.find(match);
    if (found) return Promise.resolve(found);
    return new Promise((resolve, reject) => {
      const waiter = { match, resolve };
      this.waiters.add(waiter);
      setTimeout(() => {
        if (this.waiters.delete(waiter)) reject(new Error(`no matching message within ${timeoutMs} ms; received: ${JSON.stringify(this.received).slice(0, 2000)}`));
      }, timeoutMs).unref();
    });
  }

  /** initialize, as a client with no optional capabilities. */
  initialize(): Promise<any> {
    return this.request("initialize", { protocolVersion: 1, clientCapabilities: {} });
  }

  close(): Promise<void> {
    return new Promise((resolve) => {
      if (this.socket.readyState === WebSocket.CLOSED) return resolve();
      this.socket.once("close", () => resolve());
      this.socket.close();
    });
  }
}
