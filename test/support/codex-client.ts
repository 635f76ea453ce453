import { WebSocket } from "ws";
import { officialValidator, type OfficialValidator } from "./codex-official-schema.js";
import { RpcError } from "./ask-client.js";

export { RpcError, rpcError } from "./ask-client.js";

export type CodexMessage = Record<string, any>;
type ServerRequestHandler = (params: any, message: CodexMessage) => unknown;

let sharedValidator: OfficialValidator | undefined;
/** The official schema, compiled once per test file. */
export const official = (): OfficialValidator => (sharedValidator ??= officialValidator());

/**
 * A raw Codex app-server client for tests, over a WebSocket or a line channel: requests numbered
 * from 1, every received message kept in order and checked against the OFFICIAL Codex 0.169.0
 * schema (responses against the response of the request they answer), server requests answered by
 * per-method handlers (unhandled ones are left unanswered, as the AI SDK provider does).
 */
export class CodexTestClient {
  readonly received: CodexMessage[] = [];
  /** Problems the official schema found in received messages. */
  readonly invalid: string[] = [];
  private nextId = 1;
  private readonly pending = new Map<number, { method: string; resolve: (m: CodexMessage) => void }>();
  private readonly waiters = new Set<() => void>();
  private readonly handlers = new Map<string, ServerRequestHandler>();

  constructor(private readonly sendLine: (line: string) => void) {}

  static async websocket(url: string, headers: Record<string, string> = {}): Promise<CodexTestClient & { socket: WebSocket }> {
    const socket = new WebSocket(url, { headers });
    const client = new CodexTestClient((line) => socket.send(line)) as CodexTestClient & { socket: WebSocket };
    client.socket = socket;
    socket.on("message", (data) => client.receive(data.toString()));
    await new Promise<void>((resolve, reject) => {
      socket.once("open", () => resolve());
      socket.once("error", reject);
    });
    return client;
  }

  /** Feeds one received line (or WebSocket message). */
  receive(text: string): void {
    const message = JSON.parse(text) as CodexMessage;
    this.received.push(message);
    const request = "id" in message && !("method" in message) ? this.pending.get(message.id) : undefined;
    let problems: string[];
    try {
      problems = official().serverMessage(message, request?.method);
    } catch (error) {
      problems = [`the check failed: ${(error as Error).message}`];
    }
    if (problems.length) this.invalid.push(`${text.slice(0, 300)} → ${problems.join("; ")}`);
    if (request) {
      this.pending.delete(message.id);
      request.resolve(message);
    } else if (typeof message.method === "string" && "id" in message) {
      const handler = this.handlers.get(message.method);
      if (handler) {
        void Promise.resolve(handler(message.params, message)).then((result) => {
          if (result !== undefined) this.send({ id: message.id, result });
        });
      }
    }
    for (const wake of [...this.waiters]) wake();
  }

  send(message: object): void {
    this.sendLine(JSON.stringify(message));
  }

  /** Sends a request and resolves with the whole response message (result or error). */
  requestRaw(method: string, params?: unknown): Promise<CodexMessage> {
    const id = this.nextId++;
    return new Promise((resolve) => {
      this.pending.set(id, { method, resolve });
      this.send({ id, method, ...(params === undefined ? {} : { params }) });
    });
  }

  /** Sends a request; resolves with its result, rejects with RpcError. */
  async request<T = any>(method: string, params?: unknown): Promise<T> {
    const response = await this.requestRaw(method, params);
    if (response.error) throw new RpcError(response.error.code, response.error.message, response.error.data);
    return response.result as T;
  }

  notify(method: string, params?: unknown): void {
    this.send({ method, ...(params === undefined ? {} : { params }) });
  }

  /** initialize + initialized, as the clients do. */
  async initialize(capabilities: Record<string, unknown> | null = { experimentalApi: true }): Promise<any> {
    const result = await this.request("initialize", { clientInfo: { name: "codex-tests", version: "1" }, ...(capabilities ? { capabilities } : {}) });
    this.notify("initialized");
    return result;
  }

  /** Answers every server request of `method` with what `handler` returns (undefined: no answer). */
  onRequest(method: string, handler: ServerRequestHandler): void {
    this.handlers.set(method, handler);
  }

  /** Notifications received so far, optionally of one method. */
  notifications(method?: string): CodexMessage[] {
    return this.received.filter((m) => typeof m.method === "string" && !("id" in m) && (method === undefined || m.method === method));
  }

  /** Server requests received so far, optionally of one method. */
  serverRequests(method?: string): CodexMessage[] {
    return this.received.filter((m) => typeof m.method === "string" && "id" in m && (method === undefined || m.method === method));
  }

  /** Resolves with the first received message (from `from` on) that `predicate` picks. */
  waitFor(predicate: (m: CodexMessage) => boolean, timeoutMs = 15_000, from = 0): Promise<CodexMessage> {
    return new Promise((resolve, reject) => {
      const check = () => {
        const found = this.received.slice(from).find(predicate);
        if (!found) return false;
        this.waiters.delete(check);
        clearTimeout(timer);
        resolve(found);
        return true;
      };
      const timer = setTimeout(() => {
        this.waiters.delete(check);
        reject(new Error(`timed out waiting; received:\n${this.received.map((m) => JSON.stringify(m).slice(0, 200)).join("\n")}`));
      }, timeoutMs);
      if (!check()) this.waiters.add(check);
    });
  }

  /** Resolves with the turn/completed of `turnId`. */
  turnCompleted(turnId: string, timeoutMs?: number): Promise<CodexMessage> {
    return this.waitFor((m) => m.method === "turn/completed" && m.params.turn.id === turnId, timeoutMs);
  }

  /** Every notification of a turn, in order (those naming it by turnId or turn.id). */
  turnMessages(turnId: string): CodexMessage[] {
    return this.received.filter((m) => m.params?.turnId === turnId || m.params?.turn?.id === turnId);
  }

  /** Starts a turn with `text` and resolves with its turn/completed and every message of the turn. */
  async turn(threadId: string, text: string, extra: Record<string, unknown> = {}): Promise<{ turnId: string; completed: CodexMessage; messages: CodexMessage[] }> {
    const { turn } = await this.request("turn/start", { threadId, input: [{ type: "text", text, text_elements: [] }], ...extra });
    const completed = await this.turnCompleted(turn.id);
    return { turnId: turn.id, completed, messages: this.turnMessages(turn.id) };
  }
}

/** The agent's text in a turn's messages: the completed agentMessage items, joined. */
export function agentText(messages: CodexMessage[]): string {
  return messages
    .filter((m) => m.method === "item/completed" && m.params.item.type === "agentMessage")
    .map((m) => m.params.item.text)
    .join("");
}

/** A turn's completed items of one type. */
export const completedItems = (messages: CodexMessage[], type: string) =>
  messages.filter((m) => m.method === "item/completed" && m.params.item.type === type).map((m) => m.params.item);
