import { connect, type Socket } from "node:net";
import { createInterface } from "node:readline";
import { WebSocket } from "ws";
import type { Event } from "../../generated/ask-v1.0.js";
import { ProtocolValidators } from "../../src/validation/validator.js";

/** A JSON-RPC error answer, thrown by AskTestClient.request. */
export class RpcError extends Error {
  constructor(
    readonly code: number,
    message: string,
    readonly data?: unknown,
  ) {
    super(`${code}: ${message}`);
  }
}

/** Resolves with the RpcError a request must fail with; fails when it succeeds or fails otherwise. */
export const rpcError = (promise: Promise<unknown>): Promise<RpcError> =>
  promise.then(
    (result) => {
      throw new Error(`expected an error, got ${JSON.stringify(result)}`);
    },
    (error: unknown) => {
      if (!(error instanceof RpcError)) throw error;
      return error;
    },
  );

type ReverseHandler = (method: string, params: Record<string, unknown>) => unknown;

/**
 * A raw Ask client for tests: it speaks JSON-RPC over text lines (WebSocket or any line channel),
 * validates every message it receives against the registry (responses against the result of the
 * request they answer), collects session/event notifications and answers reverse requests.
 */
export class AskTestClient {
  readonly events: Array<{ sessionId?: string; event: Event }> = [];
  readonly received: unknown[] = [];
  readonly invalid: string[] = [];
  private nextId = 1;
  private readonly pending = new Map<string | number, { method: string; resolve: (v: unknown) => void; reject: (e: Error) => void }>();
  private readonly waiters = new Set<() => void>();
  private readonly schema = ProtocolValidators.shared().get("ask");
  reverse: ReverseHandler | undefined;

  constructor(
    private readonly sendLine: (line: string) => void,
    private readonly options: { jsonrpc?: boolean; firstId?: number } = {},
  ) {
    this.nextId = options.firstId ?? 1;
  }

  static async websocket(url: string, options: { jsonrpc?: boolean; headers?: Record<string, string> } = {}): Promise<AskTestClient & { socket: WebSocket }> {
    const socket = new WebSocket(url, { headers: options.headers });
    const client = new AskTestClient((line) => socket.send(line), options) as AskTestClient & { socket: WebSocket };
    client.socket = socket;
    socket.on("message", (data, isBinary) => {
      // JSON-RPC travels in text frames; a binary one is a fault even when its bytes are valid JSON.
      if (isBinary) client.invalid.push(`binary frame: ${data.toString().slice(0, 200)}`);
      client.receive(data.toString());
    });
    await new Promise<void>((resolve, reject) => {
      socket.once("open", () => resolve());
      socket.once("error", reject);
    });
    return client;
  }

  /**
   * An Ask client on a WebSocket as the principal of `token` (its bearer header), initialized as
   * `name` with the capabilities given; what terminates its socket goes into `cleanups` (the test's
   * list of what to undo).
   */
  static async signedIn(
    url: string,
    token: string,
    options: { name: string; capabilities?: string[]; cleanups: { push(cleanup: () => unknown): unknown } },
  ): Promise<AskTestClient & { socket: WebSocket }> {
    const client = await AskTestClient.websocket(url, { headers: { authorization: `Bearer ${token}` } });
    options.cleanups.push(() => client.socket.terminate());
    const { capabilities } = options;
    await client.request("initialize", { client: { name: options.name, version: "1" }, ...(capabilities ? { capabilities } : {}) });
    return client;
  }

  /** An Ask client on the Unix socket at `path` (NDJSON, one message a line). */
  static async unixSocket(path: string, options: { jsonrpc?: boolean } = {}): Promise<AskTestClient & { socket: Socket }> {
    const socket = connect(path);
    await new Promise<void>((resolve, reject) => {
      socket.once("connect", () => resolve());
      socket.once("error", reject);
    });
    const client = new AskTestClient((line) => socket.write(`${line}\n`), options) as AskTestClient & { socket: Socket };
    client.socket = socket;
    // A gateway that goes away first resets the connection; what the tests look at is what arrived.
    socket.on("error", () => undefined);
    createInterface({ input: socket }).on("line", (line) => client.receive(line));
    return client;
  }

  /** Feeds one received line (or WebSocket message). */
  receive(text: string): void {
    const message = JSON.parse(text) as Record<string, unknown> | Record<string, unknown>[];
    for (const m of Array.isArray(message) ? message : [message]) this.handle(m);
    for (const wake of [...this.waiters]) wake();
  }

  private handle(m: Record<string, unknown>): void {
    this.received.push(m);
    const request = "id" in m && !("method" in m) ? this.pending.get(m.id as string | number) : undefined;
    const verdict = this.schema.message("server", m, request?.method);
    if (!verdict.ok) this.invalid.push(`${JSON.stringify(m).slice(0, 300)} → ${JSON.stringify(verdict.issues)}`);
    if (typeof m.method === "string") {
      if (m.method === "session/event") {
        const params = m.params as { event: Event; sessionId?: string };
        this.events.push({ sessionId: params.sessionId, event: params.event });
      } else if ("id" in m) {
        void this.answerReverse(m.id as string | number, m.method, (m.params ?? {}) as Record<string, unknown>);
      }
      return;
    }
    if (!request) return;
    this.pending.delete(m.id as string | number);
    if ("error" in m) {
      const e = m.error as { code: number; message: string; data?: unknown };
      request.reject(new RpcError(e.code, e.message, e.data));
    } else request.resolve(m.result);
  }

  private async answerReverse(id: string | number, method: string, params: Record<string, unknown>) {
    if (!this.reverse) return;
    try {
      const result = await this.reverse(method, params);
      this.send({ id, result });
    } catch (err) {
      this.send({ id, error: { code: -32000, message: (err as Error).message } });
    }
  }

  /** Sends one line exactly as given (a batch, a non-object, anything). */
  sendRaw(line: string): void {
    this.sendLine(line);
  }

  send(message: Record<string, unknown>): void {
    this.sendLine(JSON.stringify(this.options.jsonrpc === false ? message : { jsonrpc: "2.0", ...message }));
  }

  request<T = any>(method: string, params?: unknown): Promise<T> {
    const id = this.nextId++;
    return new Promise<T>((resolve, reject) => {
      this.pending.set(id, { method, resolve: resolve as (v: unknown) => void, reject });
      this.send({ id, method, ...(params === undefined ? {} : { params }) });
    });
  }

  /** The id of the request sent last (ids count up from 1). */
  get lastRequestId(): number {
    return this.nextId - 1;
  }

  notify(method: string, params?: unknown): void {
    this.send({ method, ...(params === undefined ? {} : { params }) });
  }

  /** Events of one session, in arrival order. */
  eventsOf(sessionId: string): Event[] {
    return this.events.filter((e) => e.sessionId === sessionId).map((e) => e.event);
  }

  /** Resolves once `predicate` holds; fails with a description of what was seen instead. */
  waitFor(predicate: () => boolean, what: string, timeoutMs = 15_000): Promise<void> {
    if (predicate()) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const check = () => {
        if (!predicate()) return;
        clearTimeout(timer);
        this.waiters.delete(check);
        resolve();
      };
      const timer = setTimeout(() => {
        this.waiters.delete(check);
        const seen = this.events.map((e) => `${e.event.seq}:${e.event.type}`).join(" ");
        reject(new Error(`timed out waiting for ${what}; events seen: ${seen}`));
      }, timeoutMs);
      this.waiters.add(check);
    });
  }

  waitForEvent(sessionId: string, type: string, what = type): Promise<Event> {
    return this.waitFor(() => this.eventsOf(sessionId).some((e) => e.type === type), `${what} in ${sessionId}`).then(
      () => this.eventsOf(sessionId).filter((e) => e.type === type).at(-1)!,
    );
  }
}
