import type { Writable } from "node:stream";
import type WebSocket from "ws";
import type { Log } from "../shared/log.js";
import { displayUrl, GatewayRefusedError, openGatewaySocket } from "./gateway-socket.js";
import type { NdjsonConnection } from "./ndjson-stream.js";
import type { RelayDialect } from "./relay-dialects.js";
import { isRequestId, keyOf, OpenRequests, type OpenRequest, type RequestId } from "./relay-requests.js";
import { SpacedWriter } from "./relay-spaced-writer.js";
import type { StreamResume } from "./relay-stream-resume.js";
import { isObject } from "../shared/unknown-values.js";

/**
 * A stdio client's link to a running gateway (`acp --remote`, `app-server --remote`, `stdio
 * --remote`): each line the client writes goes to the gateway's WebSocket route as one text
 * message, and each message the gateway sends becomes one line. The relay passes messages on
 * unchanged and keeps only what it needs to be honest when the link drops (a gateway restart):
 *
 * - requests the lost link carried are answered by the relay, -32012 "gateway unavailable, retry",
 *   in the dialect's shape, instead of hanging;
 * - it reconnects with backoff; lines the client writes meanwhile wait (in order) for the new link,
 *   up to `holdMs`, after which their requests get the same -32012 and the lines are dropped;
 * - on the new link it repeats the client's handshake (its `initialize`, and for Codex
 *   `initialized`) and the dialect's stream resumes (Ask: each `session/subscribe` from the last
 *   seq forwarded, or, when the session's log began again, a `session.reset` and the new log
 *   renumbered after it; Codex: `thread/resume` of each thread the client opened; ACP:
 *   `session/resume` of each session), keeping their answers from the client, which had them;
 * - the client's answers to requests the lost link asked are dropped: the gateway that asked them
 *   is gone (a pending approval is asked again on the new link by whoever still needs it).
 *
 * The token refused on a new link (rotated or revoked) ends the relay: `fatal` settles.
 */

export interface GatewayRelayOptions {
  dialect: RelayDialect;
  /** ws:// or wss:// URL of the dialect's route. */
  url: string;
  /** Sent as `Authorization: Bearer …`. */
  token?: string;
  log: Log;
  /** How long a line waits for a lost link to come back. */
  holdMs: number;
  /** Ping interval of the link (default HEARTBEAT_MS); a gateway that has not answered one ping by the next is taken as gone. */
  heartbeatMs?: number;
  /** Delay before the first reconnect attempt, doubled after each failed one up to `maxMs`. */
  backoff?: { firstMs: number; maxMs: number };
  /**
   * Where the lines go (the stream `send` writes to): while it is backed up, the gateway's messages
   * are not read either, so a client that does not read holds them in the gateway's socket, not here.
   */
  output?: Writable;
}

const DEFAULT_BACKOFF = { firstMs: 100, maxMs: 5_000 };
/** Ping interval of the link; a gateway that has not answered the previous ping by the next is taken as gone. */
export const HEARTBEAT_MS = 20_000;
/** Ids of the relay's own requests (repeated handshakes and resumes): strings no client is likely to use. */
const OWN_ID_PREFIX = "tau-gateway-relay:";

type Message = Record<string, unknown>;

interface HeldLine {
  text: string;
  requests: OpenRequest[];
  timer: NodeJS.Timeout;
}

export class GatewayRelay {
  /** Settles with the reason when the relay gives up (the token was refused on a new link). */
  readonly fatal: Promise<Error>;
  private giveUp!: (reason: Error) => void;
  private readonly dialect: RelayDialect;
  private readonly shownUrl: string;
  private readonly log: Log;
  private readonly resume: StreamResume | undefined;
  private readonly requests = new OpenRequests();
  private socket: WebSocket | undefined;
  /** Counts links: a request remembers the one that carried it. */
  private generation = 0;
  /** The link is open and the handshake repeated: client lines go straight through. */
  private up = false;
  private reconnecting = false;
  private closed = false;
  private wakeReconnect: (() => void) | undefined;
  private readonly held: HeldLine[] = [];
  /** The gateway's requests on the current link that the client has not answered yet, by id. */
  private readonly gatewayRequests = new Map<string, { id: RequestId; params: unknown; withdrawn?: boolean }>();
  /** The relay's own requests on the current link, by id. */
  private readonly ownRequests = new Map<string, (answer: Message) => void>();
  private nextOwnId = 1;
  /** The client's handshake as it was answered, to repeat on a new link. */
  private handshakeParams: unknown;
  private readonly handshakeNotifications = new Map<string, unknown>();
  /** Whether the gateway's answers carry "jsonrpc" (for a dialect that mirrors it). */
  private gatewayWritesJsonrpc = true;
  /** Writes a line to the client (through `output`, once the stream is attached). */
  private readonly output: SpacedWriter;
  private sendToClient: (line: string) => void;
  private readonly unwritten: string[] = [];

  private constructor(
    private readonly options: GatewayRelayOptions,
    socket: WebSocket,
  ) {
    this.dialect = options.dialect;
    this.shownUrl = displayUrl(options.url);
    this.log = options.log;
    this.resume = options.dialect.resume?.();
    this.fatal = new Promise((resolve) => (this.giveUp = resolve));
    this.sendToClient = (line) => void this.unwritten.push(line);
    this.output = new SpacedWriter((line) => this.sendToClient(line), options.dialect.pauseAfterResponseMs);
    this.attach(socket);
    this.up = true;
  }

  /** Connects to the gateway; rejects (GatewayRefusedError, GatewayUnreachableError) when it cannot. */
  static async open(options: GatewayRelayOptions): Promise<GatewayRelay> {
    return new GatewayRelay(options, await openGatewaySocket(options.url, options.token));
  }

  /** The client side, for an NdjsonStream: `send` writes a line to the client. */
  connection(send: (line: string) => void): NdjsonConnection {
    this.sendToClient = send;
    for (const line of this.unwritten.splice(0)) send(line);
    return {
      receive: (line) => this.fromClient(line),
      oversized: (maxLineBytes) => this.oversized(maxLineBytes),
      close: () => void this.close(),
    };
  }

  /** Requests passed on (or held) and not answered yet. */
  get openRequests(): number {
    return this.requests.size;
  }

  /** Answers every request still open -32012 (the relay is stopping before the gateway answered them). */
  failOpenRequests(why: string): void {
    for (const line of this.held.splice(0)) clearTimeout(line.timer);
    this.answerUnavailable(this.requests.takeWhere(() => true), why);
  }

  /** Stops: open requests are answered -32012, the link is closed and not reopened. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.failOpenRequests("the relay stopped before the gateway answered");
    this.output.flush();
    this.wakeReconnect?.();
    const socket = this.socket;
    this.socket = undefined;
    if (!socket || socket.readyState === socket.CLOSED) return;
    const gone = new Promise<void>((resolve) => socket.once("close", () => resolve()));
    socket.close(1000, "client done");
    const timer = setTimeout(() => socket.terminate(), 1_000);
    await gone;
    clearTimeout(timer);
  }

  // --- from the client ------------------------------------------------------------------------

  private fromClient(line: string): Promise<void> {
    let message: unknown;
    try {
      message = JSON.parse(line);
    } catch {
      // Not JSON: the gateway answers it (parse error) in its own words.
      this.forward(line, []);
      return Promise.resolve();
    }
    const batch = Array.isArray(message) ? message : undefined;
    const elements: unknown[] = batch ?? [message];
    const requests: OpenRequest[] = [];
    const asSent = elements.map((element) => (isObject(element) ? this.resume?.toGateway?.(element) : undefined));
    // What goes to the gateway, where the dialect's resume translates it (Ask seqs after a log began again).
    if (asSent.some((changed) => changed !== undefined)) {
      const sent = elements.map((element, i) => asSent[i] ?? element);
      line = JSON.stringify(batch ? sent : sent[0]);
    }
    for (const element of elements) {
      if (!isObject(element)) continue;
      if (typeof element.method === "string" && isRequestId(element.id)) {
        requests.push(this.requests.add(element.id, element.method, element.params, batch));
      } else if (typeof element.method === "string" && !("id" in element) && this.dialect.handshakeNotifications.includes(element.method)) {
        this.handshakeNotifications.set(element.method, element.params);
      }
    }
    if (!batch && isObject(message) && !("method" in message) && isRequestId(message.id) && !this.gatewayRequests.delete(keyOf(message.id))) {
      // An answer to a request of a link that is gone: nobody waits for it any more.
      this.log("info", "an answer to a request of a lost gateway connection was dropped", { id: message.id });
      return Promise.resolve();
    }
    this.forward(line, requests);
    return Promise.all(requests.map((request) => request.answered)).then(() => undefined);
  }

  private forward(text: string, requests: OpenRequest[]): void {
    if (this.up && this.socket) {
      this.socket.send(text);
      for (const request of requests) request.sentOn = this.generation;
      return;
    }
    const line: HeldLine = {
      text,
      requests,
      timer: setTimeout(() => {
        this.held.splice(this.held.indexOf(line), 1);
        this.log("warn", "a message waited too long for the gateway to come back and was dropped", { holdMs: this.options.holdMs });
        const expired = new Set(requests);
        this.answerUnavailable(this.requests.takeWhere((request) => expired.has(request)), `no connection to the gateway within ${this.options.holdMs} ms`);
      }, this.options.holdMs),
    };
    this.held.push(line);
  }

  private oversized(maxLineBytes: number): void {
    if (!this.dialect.answersOversized) {
      this.log("info", `${this.dialect.name} message dropped without an answer`, { reason: `a message of more than ${maxLineBytes} bytes was skipped` });
      return;
    }
    this.output.push(
      this.framed({
        id: null,
        error: {
          code: this.dialect.invalidRequestCode,
          message: `Invalid Request: a message of more than ${maxLineBytes} bytes was skipped (the gateway's limit)`,
          data: { limit: maxLineBytes },
        },
      }),
    );
  }

  // --- from the gateway -----------------------------------------------------------------------

  private attach(socket: WebSocket): void {
    this.socket = socket;
    this.generation += 1;
    this.gatewayRequests.clear();
    socket.on("message", (data, isBinary) => {
      if (this.socket === socket) this.fromGateway(isBinary ? Buffer.from(data as Buffer).toString("utf8") : String(data));
    });
    socket.on("error", (error) => this.log("debug", "gateway connection error", { error: error.message }));
    // A gateway that vanished without closing (a machine gone, a network cut) answers no ping:
    // the link is taken as lost at the next one instead of when TCP gives up.
    let answered = true;
    socket.on("pong", () => (answered = true));
    const heartbeat = setInterval(() => {
      if (!answered) return socket.terminate();
      answered = false;
      socket.ping();
    }, this.options.heartbeatMs ?? HEARTBEAT_MS);
    heartbeat.unref();
    socket.on("close", (code) => {
      clearInterval(heartbeat);
      if (this.socket === socket) this.linkLost(code);
    });
  }

  private fromGateway(text: string): void {
    let message: unknown;
    try {
      message = JSON.parse(text);
    } catch {
      this.log("warn", "the gateway sent a message that is not JSON; passed on as it is");
      this.output.push(text.replace(/\r?\n/g, " "));
      return;
    }
    if (isObject(message) && typeof message.id === "string" && message.id.startsWith(OWN_ID_PREFIX) && !("method" in message)) {
      const answer = this.ownRequests.get(message.id);
      this.ownRequests.delete(message.id);
      answer?.(message);
      return;
    }
    const elements: unknown[] = Array.isArray(message) ? message : [message];
    const notifications: Message[] = [];
    let answersClient = false;
    /** The elements as the client must read them, where the dialect's resume translates them. */
    const asWritten = new Map<number, Message>();
    for (const [index, element] of elements.entries()) {
      if (!isObject(element)) continue;
      if (typeof element.method === "string") {
        const changed = this.resume?.toClient?.(element);
        if (changed) asWritten.set(index, changed);
        if (isRequestId(element.id)) this.gatewayRequests.set(keyOf(element.id), { id: element.id, params: element.params });
        else notifications.push(element);
        // The gateway withdrew one of its requests itself (another client decided): the client may
        // still answer it, but it is not withdrawn a second time when the link is lost.
        if (element.method === this.dialect.withdrawalMethod && isObject(element.params) && isRequestId(element.params.requestId)) {
          const request = this.gatewayRequests.get(keyOf(element.params.requestId));
          if (request) request.withdrawn = true;
        }
        continue;
      }
      if (!isRequestId(element.id)) continue;
      this.gatewayWritesJsonrpc = "jsonrpc" in element;
      const request = this.requests.take(element.id);
      if (!request) continue;
      answersClient = true;
      if ("result" in element) this.answered(request, element.result);
      const changed = this.resume?.toClient?.(element, request.method);
      if (changed) asWritten.set(index, changed);
      request.settle();
    }
    if (asWritten.size > 0) {
      const written = elements.map((element, index) => asWritten.get(index) ?? element);
      this.output.push(JSON.stringify(Array.isArray(message) ? written : written[0]), answersClient);
    } else {
      // A line is one message: JSON that was sent pretty-printed is written again on one line.
      this.output.push(text.includes("\n") ? JSON.stringify(message) : text, answersClient);
    }
    for (const notification of notifications) this.resume?.forwarded(notification.method as string, notification.params);
    this.pauseWhileOutputBackedUp();
  }

  private answered(request: OpenRequest, result: unknown): void {
    if (request.method === this.dialect.handshakeRequest) this.handshakeParams = request.params ?? {};
    this.resume?.answered(request.method, request.params, result);
  }

  private pauseWhileOutputBackedUp(): void {
    const { output } = this.options;
    const socket = this.socket;
    if (!output?.writableNeedDrain || !socket || socket.isPaused) return;
    socket.pause();
    output.once("drain", () => socket.resume());
  }

  // --- losing and regaining the link ------------------------------------------------------------

  private linkLost(code: number): void {
    const lost = this.generation;
    this.socket = undefined;
    this.up = false;
    this.withdrawGatewayRequests();
    for (const answer of this.ownRequests.values()) answer({ error: { message: "the connection closed" } });
    this.ownRequests.clear();
    if (this.closed) return;
    this.answerUnavailable(
      this.requests.takeWhere((request) => request.sentOn === lost),
      `the connection to the gateway at ${this.shownUrl} was lost before it answered (close code ${code})`,
    );
    if (this.reconnecting) return;
    this.log("warn", "the connection to the gateway was lost; reconnecting", { url: this.shownUrl, code });
    void this.reconnect();
  }

  /** The client's prompts for the lost link's requests are withdrawn in the dialect's words (nobody can take the answers now). */
  private withdrawGatewayRequests(): void {
    for (const { id, params, withdrawn } of this.gatewayRequests.values()) {
      const notice = this.closed || withdrawn ? undefined : this.dialect.withdrawal?.(id, params);
      if (notice) this.output.push(this.framed(notice));
    }
    this.gatewayRequests.clear();
  }

  private async reconnect(): Promise<void> {
    this.reconnecting = true;
    const backoff = this.options.backoff ?? DEFAULT_BACKOFF;
    let delay = backoff.firstMs;
    try {
      while (!this.closed) {
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, delay);
          this.wakeReconnect = () => {
            clearTimeout(timer);
            resolve();
          };
        });
        this.wakeReconnect = undefined;
        if (this.closed) return;
        delay = Math.min(delay * 2, backoff.maxMs);
        let socket: WebSocket;
        try {
          socket = await openGatewaySocket(this.options.url, this.options.token);
        } catch (error) {
          if (error instanceof GatewayRefusedError && error.status === 401) return this.giveUp(error);
          this.log("debug", "reconnecting to the gateway failed; trying again", { error: (error as Error).message, retryInMs: delay });
          continue;
        }
        if (this.closed) return void socket.close(1000, "client done");
        this.attach(socket);
        if (!(await this.repeatHandshake(socket))) continue;
        this.up = true;
        this.log("info", "reconnected to the gateway", { url: this.shownUrl });
        for (const line of this.held.splice(0)) {
          clearTimeout(line.timer);
          this.forward(line.text, line.requests);
        }
        return;
      }
    } finally {
      this.reconnecting = false;
    }
  }

  /**
   * Repeats the client's handshake and the dialect's resumes on a new link, their answers kept
   * from the client. Resolves false when the link was lost meanwhile (the loop tries again).
   */
  private async repeatHandshake(socket: WebSocket): Promise<boolean> {
    if (this.handshakeParams !== undefined) {
      const answer = await this.ownRequest(this.dialect.handshakeRequest, this.handshakeParams);
      if (this.socket !== socket) return false;
      if ("error" in answer) this.log("error", "the gateway refused the client's handshake on the new connection", { error: answer.error });
      for (const [method, params] of this.handshakeNotifications) socket.send(this.framed({ method, ...(params === undefined ? {} : { params }) }));
    }
    const looked = (await this.resume?.prepare?.((method, params) => this.ownRequest(method, params), (notice) => this.output.push(this.framed(notice)))) ?? [];
    if (this.socket !== socket) return false;
    const resumes = await Promise.all((this.resume?.replays() ?? []).map(async ({ method, params }) => ({ method, params, answer: await this.ownRequest(method, params) })));
    if (this.socket !== socket) return false;
    const unavailable = (answer: Message) => isObject(answer.error) && answer.error.code === this.dialect.unavailableCode;
    if (looked.some(unavailable) || resumes.some(({ answer }) => unavailable(answer))) {
      // The gateway is up but cannot serve the sessions yet (its Tau host is still being taken
      // over): this link is let go unannounced and the next attempt repeats everything.
      this.log("info", "the gateway cannot resume the streams yet; trying again", { error: [...looked, ...resumes.map(({ answer }) => answer)].find(unavailable)?.error });
      this.socket = undefined;
      socket.terminate();
      return false;
    }
    for (const { method, params, answer } of resumes) {
      if (!("error" in answer)) continue;
      this.log("warn", `resuming with ${method} failed`, { params, error: answer.error });
      this.resume?.refused?.(params);
    }
    return true;
  }

  private ownRequest(method: string, params: unknown): Promise<Message> {
    const id = `${OWN_ID_PREFIX}${this.nextOwnId++}`;
    return new Promise((resolve) => {
      this.ownRequests.set(id, resolve);
      this.socket!.send(this.framed({ id, method, params }));
    });
  }

  // --- the relay's own answers ----------------------------------------------------------------

  private answerUnavailable(groups: OpenRequest[][], why: string): void {
    for (const group of groups) {
      const answers = group.map((request) =>
        this.framedObject({ id: request.id, error: { code: this.dialect.unavailableCode, message: `gateway unavailable, retry: ${why}`, data: { method: request.method } } }),
      );
      this.output.push(JSON.stringify(group[0]!.batch ? answers : answers[0]));
      for (const request of group) request.settle();
    }
  }

  private framedObject(message: { id?: RequestId | null } & Message): Message {
    const include = this.dialect.jsonrpcMember === "include" || (this.dialect.jsonrpcMember === "mirror" && this.gatewayWritesJsonrpc);
    return include ? { jsonrpc: "2.0", ...message } : message;
  }

  private framed(message: { id?: RequestId | null } & Message): string {
    return JSON.stringify(this.framedObject(message));
  }
}
