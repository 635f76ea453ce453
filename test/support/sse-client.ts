import { request as httpRequest, type IncomingHttpHeaders, type IncomingMessage } from "node:http";

/** One server-sent events frame as a client sees it. */
export interface SseFrame {
  id?: string;
  event?: string;
  data?: string;
}

/**
 * A raw server-sent events client for tests (node:http, so it can also pick its source address):
 * collects frames and comment lines as they arrive, without buffering the stream.
 */
export class SseTestClient {
  readonly frames: SseFrame[] = [];
  readonly comments: string[] = [];
  ended = false;
  private buffer = "";
  private readonly waiters = new Set<() => void>();

  private constructor(
    readonly status: number,
    readonly headers: IncomingHttpHeaders,
    private readonly response: IncomingMessage,
  ) {}

  /** Opens the stream; resolves once the response head arrived (whatever its status). */
  static open(url: string, options: { headers?: Record<string, string>; localAddress?: string } = {}): Promise<SseTestClient & { body: () => Promise<string> }> {
    return new Promise((resolve, reject) => {
      const req = httpRequest(url, { headers: { accept: "text/event-stream", ...options.headers }, localAddress: options.localAddress }, (response) => {
        const client = new SseTestClient(response.statusCode ?? 0, response.headers, response) as SseTestClient & { body: () => Promise<string> };
        let text = "";
        const done = new Promise<string>((resolveBody) => response.on("end", () => resolveBody(text)));
        client.body = () => done;
        response.setEncoding("utf8");
        response.on("data", (chunk: string) => {
          text += chunk;
          client.feed(chunk);
        });
        const finish = () => {
          client.ended = true;
          client.wakeAll();
        };
        response.on("end", finish);
        response.on("close", finish);
        resolve(client);
      });
      req.on("error", reject);
      req.end();
    });
  }

  /** How many `session/event` frames arrived: for waits, which run on every chunk (events() parses them all). */
  eventCount(): number {
    return this.frames.filter((f) => f.event === "session/event").length;
  }

  /** The parsed `data` of every `session/event` frame. */
  events(): Array<{ sessionId: string; event: { type: string; seq: number; payload: any } }> {
    return this.frames.filter((f) => f.event === "session/event").map((f) => JSON.parse(f.data ?? "null"));
  }

  waitFor(predicate: () => boolean, what: string, timeoutMs = 15_000): Promise<void> {
    if (predicate()) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const check = () => {
        if (predicate()) {
          clearTimeout(timer);
          this.waiters.delete(check);
          resolve();
        } else if (this.ended) {
          clearTimeout(timer);
          this.waiters.delete(check);
          reject(new Error(`stream ended before ${what}; frames: ${JSON.stringify(this.frames).slice(0, 2000)}`));
        }
      };
      const timer = setTimeout(() => {
        this.waiters.delete(check);
        reject(new Error(`timed out waiting for ${what}; frames: ${JSON.stringify(this.frames).slice(0, 2000)}`));
      }, timeoutMs);
      this.waiters.add(check);
    });
  }

  waitForEvent(type: string): Promise<{ type: string; seq: number; payload: any }> {
    return this.waitFor(() => this.events().some((e) => e.event.type === type), `a ${type} event`).then(() => this.events().find((e) => e.event.type === type)!.event);
  }

  close(): void {
    this.response.destroy();
  }

  private feed(chunk: string): void {
    this.buffer += chunk.replace(/\r\n?/g, "\n");
    let end: number;
    while ((end = this.buffer.indexOf("\n\n")) !== -1) {
      const block = this.buffer.slice(0, end);
      this.buffer = this.buffer.slice(end + 2);
      const frame: SseFrame = {};
      let isFrame = false;
      for (const line of block.split("\n")) {
        if (line.startsWith(":")) {
          this.comments.push(line.slice(1).trim());
          continue;
        }
        const colon = line.indexOf(":");
        const field = colon === -1 ? line : line.slice(0, colon);
        const value = colon === -1 ? "" : line.slice(colon + 1).replace(/^ /, "");
        if (field === "id" || field === "event") frame[field] = value;
        else if (field === "data") frame.data = frame.data === undefined ? value : `${frame.data}\n${value}`;
        else continue;
        isFrame = true;
      }
      if (isFrame) this.frames.push(frame);
    }
    this.wakeAll();
  }

  private wakeAll(): void {
    for (const wake of [...this.waiters]) wake();
  }
}
