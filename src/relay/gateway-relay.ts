import type { Writable } from "node:stream";
import { parseBoundedJson } from "../shared/json-bounds.js";
import type WebSocket from "ws";
import type { Log } from "../shared/log.js";
import { displayUrl, openGatewaySocket } from "./gateway-socket.js";
import type { NdjsonConnection } from "../transports/ndjson-stream.js";
import type { RelayDialect } from "./relay-dialect.js";
import { HeldLines } from "./held-lines.js";
import { repeatHandshake } from "./handshake.js";
import { DEFAULT_BACKOFF, HEARTBEAT_MS, reconnect, watchLink } from "./link.js";
import { RelayOwnAnswers } from "./own-answers.js";
import { fromLinkId, isOwnId, OwnRequests } from "./own-ids.js";
import { RelayRejoins } from "./rejoins.js";
import { LEFT_OUT, RelayTranslation } from "./translation.js";
import { isRequestId, OpenRequests, type OpenRequest } from "./requests.js";
import { ReverseRequests } from "./reverse-requests.js";
import { SpacedWriter } from "./spaced-writer.js";
import type { StreamResume } from "./stream-resume.js";
import { isObject } from "../shared/unknown-values.js";

/**
 * A stdio client's link to a running gateway (`acp --remote`, `app-server --remote`, `stdio
 * --remote`): each line the client writes goes to the gateway's WebSocket route as one text
 * message, and each message the gateway sends becomes one line. The relay passes messages on
 * unchanged and keeps only what it needs to be honest when the link drops (a gateway restart):
 *
 * - requests the lost link carried are answered by the relay, -32012 "gateway unavailable, retry",
 *   in the dialect's shape, instead of hanging; but a prompt (RelayDialect.rejoins) is sent again
 *   on the new link under the same idempotency key, and answered by the turn it started if the
 *   gateway had it (rejoins.ts), so that it runs once;
 * - it reconnects with backoff; lines the client writes meanwhile wait (in order) for the new link,
 *   up to `holdMs`, after which their requests get the same -32012 and the lines are dropped;
 * - on the new link it repeats the client's handshake (its `initialize`, and for Codex
 *   `initialized`) and the dialect's stream resumes (Ask: each `session/subscribe` from the last
 *   seq forwarded, or, when the session's log began again, a `session.reset` and the new log
 *   renumbered after it; Codex: `thread/resume` of each thread the client opened; ACP:
 *   `session/resume` of each session), keeping their answers from the client, which had them;
 * - the gateway's requests reach the client under ids of the relay's own (reverse-requests.ts):
 *   the client's answers to requests the lost link asked, or that were withdrawn, are stale and
 *   dropped (a pending approval is asked again on the new link, under a new id);
 * - what waits for a new link is bounded (`holdBytes`): past it stdin is not read.
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
  /** How much of the client's input is held for a new link before stdin is no longer read (default 8 MiB). */
  holdBytes?: number;
  /** Delay before the first reconnect attempt, doubled after each failed one up to `maxMs`. */
  backoff?: { firstMs: number; maxMs: number };
  /**
   * Where the lines go (the stream `send` writes to): while it is backed up, the gateway's messages
   * are not read either, so a client that does not read holds them in the gateway's socket, not here.
   */
  output?: Writable;
}

export { HEARTBEAT_MS };
const DEFAULT_HOLD_BYTES = 8 * 1024 * 1024;

type Message = Record<string, unknown>;

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
  private readonly held: HeldLines;
  /** The gateway's requests to the client, under the relay's ids. */
  private readonly reverse: ReverseRequests;
  private readonly translation: RelayTranslation;
  /** The relay's own requests on the current link, by id. */
  private readonly ownRequests = new OwnRequests();
  /** The bound of held input was logged (once each time it is reached). */
  private toldHeldFull = false;
  /** The client's handshake as it was answered, to repeat on a new link. */
  private handshakeParams: unknown;
  private readonly handshakeNotifications = new Map<string, unknown>();
  /** Writes a line to the client (through `output`, once the stream is attached). */
  private readonly output: SpacedWriter;
  private readonly own: RelayOwnAnswers;
  /** The lost link's prompts sent again, and what waits for their answers. */
  private readonly rejoins: RelayRejoins;
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
    this.own = new RelayOwnAnswers(options.dialect, (line) => this.output.push(line));
    this.rejoins = new RelayRejoins(options.dialect.rejoinsAnsweredFirst === true, (text) => this.fromGateway(text));
    this.reverse = new ReverseRequests(options.dialect.firstRequestId);
    this.translation = new RelayTranslation(options.dialect, this.resume, this.reverse, options.log);
    this.held = new HeldLines(options.holdMs, options.holdBytes ?? DEFAULT_HOLD_BYTES, (line) => {
      this.log("warn", "a message waited too long for the gateway to come back and was dropped", { holdMs: options.holdMs });
      const expired = new Set(line.requests);
      this.own.unavailable(this.requests.takeWhere((request) => expired.has(request)), `no connection to the gateway within ${options.holdMs} ms`);
    });
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
      ready: () => this.heldRoom(),
      close: () => void this.close(),
    };
  }

  /** Requests passed on (or held) and not answered yet. */
  get openRequests(): number {
    return this.requests.size;
  }

  /** Answers every request still open -32012 (the relay is stopping before the gateway answered them). */
  failOpenRequests(why: string): void {
    const dropped = this.held.take();
    this.own.unavailable(this.requests.takeWhere(() => true), why);
    for (const line of dropped) line.done();
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
      message = parseBoundedJson(line);
    } catch {
      // Not JSON, or past the bounds on its shape: the gateway answers it in its own words.
      return this.forward(line, []);
    }
    const batch = Array.isArray(message) ? message : undefined;
    const elements: unknown[] = batch ?? [message];
    const requests: OpenRequest[] = [];
    let changed = false;
    const sent = elements.map((element) => {
      if (!isObject(element)) return element;
      const linked = this.translation.toLink(element);
      if (linked !== element) changed = true;
      if (typeof element.method === "string" && isRequestId(element.id)) {
        requests.push(this.requests.add(element.id, element.method, element.params, batch));
      } else if (typeof element.method === "string" && !("id" in element) && this.dialect.handshakeNotifications.includes(element.method)) {
        this.handshakeNotifications.set(element.method, element.params);
      }
      return linked;
    });
    const passed = sent.filter((element) => element !== LEFT_OUT);
    // Only stale answers: nothing to pass on (an empty batch would be an invalid request of the client's).
    if (passed.length === 0) return Promise.resolve();
    // What goes to the gateway, where ids or the dialect's resume translate it (Ask seqs after a log began again).
    if (changed) line = JSON.stringify(batch ? passed : passed[0]);
    const rejoins = this.dialect.rejoins;
    if (!batch && rejoins) for (const request of requests) if (rejoins.includes(request.method)) request.resend = line;
    return Promise.all([this.forward(line, requests), ...requests.map((request) => request.answered)]).then(() => undefined);
  }

  /** Sends a line on the link, or holds it for the next; settles once it is sent or dropped. */
  private forward(text: string, requests: OpenRequest[]): Promise<void> {
    if (this.up && this.socket) {
      this.socket.send(text);
      for (const request of requests) request.sentOn = this.generation;
      return Promise.resolve();
    }
    return this.held.hold(text, requests);
  }

  /** While the held lines are at their bound, no more of stdin is read. */
  private heldRoom(): Promise<void> | undefined {
    const room = this.held.room();
    if (room && !this.toldHeldFull) {
      this.toldHeldFull = true;
      this.log("warn", "the gateway is away and the input held for it is at its bound: stdin is not read until it is back", { heldBytes: this.held.heldBytes });
      void room.then(() => (this.toldHeldFull = false));
    }
    return room;
  }

  private oversized(maxLineBytes: number): void {
    const answer = this.own.oversized(maxLineBytes);
    if (answer) this.output.push(answer);
    else this.log("info", `${this.dialect.name} message dropped without an answer`, { reason: `a message of more than ${maxLineBytes} bytes was skipped` });
  }

  // --- from the gateway -----------------------------------------------------------------------

  private attach(socket: WebSocket): void {
    this.socket = socket;
    this.generation += 1;
    watchLink(socket, this.options.heartbeatMs ?? HEARTBEAT_MS, {
      message: (text) => this.socket === socket && this.fromGateway(text),
      lost: (code) => this.socket === socket && this.linkLost(code),
      log: this.log,
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
    if (isObject(message) && isOwnId(message.id) && !("method" in message)) {
      return this.ownRequests.answer({ ...message, id: message.id });
    }
    const elements: unknown[] = Array.isArray(message) ? message : [message];
    // What the gateway sends while a resent prompt is open waits for its answer (rejoins.ts).
    if (this.rejoins.holds(text, elements.some((e) => isObject(e) && typeof e.method !== "string" && isRequestId(e.id)))) return;
    const notifications: Message[] = [];
    let answersClient = false;
    let changed = false;
    const written = elements.map((element) => {
      if (!isObject(element)) return element;
      if (typeof element.method !== "string") {
        if (!isRequestId(element.id)) return element;
        this.own.gatewayWritesJsonrpc = "jsonrpc" in element;
        const id = fromLinkId(element.id);
        const request = this.requests.take(id);
        const answer = id === element.id ? element : { ...element, id };
        if (answer !== element) changed = true;
        if (!request) return answer;
        answersClient = true;
        if ("result" in answer) this.answered(request, answer.result);
        const translated = this.resume?.toClient?.(answer, request.method);
        request.settle();
        if (translated) changed = true;
        return translated ?? answer;
      }
      const out = this.translation.toClient(element);
      if (out !== element) changed = true;
      if (out !== LEFT_OUT && !isRequestId(element.id)) notifications.push(element);
      return out;
    });
    const kept = written.filter((element) => element !== LEFT_OUT);
    if (kept.length > 0) {
      if (changed) this.output.push(JSON.stringify(Array.isArray(message) ? kept : kept[0]), answersClient);
      // A line is one message: JSON that was sent pretty-printed is written again on one line.
      else this.output.push(text.includes("\n") ? JSON.stringify(message) : text, answersClient);
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
    // What waited for a resent prompt came from the gateway: the client gets it before the withdrawals.
    this.rejoins.releaseAll();
    this.withdrawGatewayRequests();
    this.ownRequests.lost();
    if (this.closed) return;
    // Sent again once the new link has resumed the streams (held lines go after the resumes).
    for (const request of this.requests.where((r) => r.sentOn === lost && r.resend !== undefined)) {
      request.sentOn = undefined;
      this.rejoins.add(request);
      void this.held.hold(request.resend!, [request]);
    }
    this.own.unavailable(
      this.requests.takeWhere((request) => request.sentOn === lost),
      `the connection to the gateway at ${this.shownUrl} was lost before it answered (close code ${code})`,
    );
    if (this.reconnecting) return;
    this.log("warn", "the connection to the gateway was lost; reconnecting", { url: this.shownUrl, code });
    void this.reconnect();
  }

  /** The client's prompts for the lost link's requests are withdrawn in the dialect's words (nobody can take the answers now). */
  private withdrawGatewayRequests(): void {
    for (const { id, params } of this.reverse.lost()) {
      const notice = this.closed ? undefined : this.dialect.withdrawal?.(id, params);
      if (notice) this.output.push(this.own.framed(notice));
    }
  }

  private async reconnect(): Promise<void> {
    this.reconnecting = true;
    try {
      await reconnect({
        url: this.options.url,
        token: this.options.token,
        backoff: this.options.backoff ?? DEFAULT_BACKOFF,
        log: this.log,
        stopped: () => this.closed,
        onWake: (wake) => (this.wakeReconnect = wake),
        refused: (error) => this.giveUp(error),
        established: async (socket) => {
          this.attach(socket);
          if (!(await repeatHandshake(socket, this.handshake()))) return false;
          this.up = true;
          this.log("info", "reconnected to the gateway", { url: this.shownUrl });
          for (const line of this.held.take()) {
            void this.forward(line.text, line.requests);
            line.done();
          }
          return true;
        },
      });
    } finally {
      this.reconnecting = false;
    }
  }

  /** What repeatHandshake needs of the relay. */
  private handshake(): Parameters<typeof repeatHandshake>[1] {
    return {
      dialect: this.dialect,
      resume: this.resume,
      log: this.log,
      params: this.handshakeParams,
      notifications: this.handshakeNotifications,
      request: (method, params) => this.ownRequests.request(method, params, (message) => this.socket!.send(this.own.framed(message))),
      send: (message) => this.socket?.send(this.own.framed(message)),
      tell: (message) => this.output.push(this.own.framed(message)),
      current: (socket) => this.socket === socket,
      letGo: (socket) => {
        this.socket = undefined;
        socket.terminate();
      },
    };
  }
}
