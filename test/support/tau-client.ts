import { mkdtempSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach } from "vitest";
import WebSocket from "ws";
import type {
  Change,
  ClientToolDefinition,
  ErrorObject,
  ReadyMessage,
  ServerMessage,
  SessionDeltaMessage,
  Snapshot,
} from "../../generated/tau-v18.js";
import { startTauHost, type RunningTauHost, type TauHostOptions } from "../../src/host/index.js";
import { ProtocolValidators } from "../../src/validation/validator.js";
import type { Cleanups } from "./cleanups.js";

/**
 * A raw Tau v18 test client over a real `ws` WebSocket. It keeps every server message in arrival
 * order, validates each one against the registry's schema (responses against the result schema of
 * the method they answer) and makes the test fail on the first invalid message, so a suite can
 * never pass while the host sends something a real Tau client would reject.
 */

const schema = ProtocolValidators.shared().get("tau", 18);
const DEFAULT_WAIT_MS = 10_000;

export type Response =
  | { version: 18; type: "response"; id: string; ok: true; result: any }
  | { version: 18; type: "response"; id: string | null; ok: false; error: ErrorObject };

export interface PendingRequest {
  id: string;
  method: string;
  response: Promise<Response>;
}

type Waiter = { predicate: (m: any) => boolean; from: number; resolve: (m: any) => void; reject: (e: Error) => void };

let clientCounter = 0;

export class TauTestClient {
  /** Every server message received, in arrival order (after `ready`). */
  readonly messages: any[] = [];
  readonly ready: ReadyMessage;
  readonly invalid: string[] = [];
  private readonly methodsById = new Map<string, string>();
  private readonly responseWaiters = new Map<string, { resolve: (r: Response) => void; reject: (e: Error) => void }>();
  private readonly listeners = new Set<(m: any) => void>();
  private waiters: Waiter[] = [];
  private nextId = 1;
  private closedInfo: { code: number; reason: string } | undefined;
  private readonly closedPromise: Promise<{ code: number; reason: string }>;

  private constructor(
    readonly name: string,
    readonly socket: WebSocket,
    ready: ReadyMessage,
  ) {
    this.ready = ready;
    this.closedPromise = new Promise((resolve) => {
      socket.on("close", (code, reason) => {
        this.closedInfo = { code, reason: reason.toString() };
        const error = new Error(`${this.name}: connection closed (${code} ${reason.toString()})`);
        for (const w of this.waiters) w.reject(error);
        this.waiters = [];
        for (const r of this.responseWaiters.values()) r.reject(error);
        this.responseWaiters.clear();
        resolve(this.closedInfo);
      });
    });
    socket.on("message", (data, isBinary) => this.receive(data, isBinary));
  }

  /** Opens a connection (with `headers` on its upgrade request) and resolves once the server's `ready` message (validated) arrived. */
  static connect(url: string, name = `client-${++clientCounter}`, headers?: Record<string, string>): Promise<TauTestClient> {
    return new Promise((resolve, reject) => {
      const socket = new WebSocket(url, { headers });
      const timer = setTimeout(() => {
        socket.terminate();
        reject(new Error(`${name}: no ready message within ${DEFAULT_WAIT_MS} ms`));
      }, DEFAULT_WAIT_MS);
      const fail = (error: Error) => {
        clearTimeout(timer);
        reject(error);
      };
      socket.once("error", fail);
      socket.once("close", (code, reason) => fail(new Error(`${name}: closed before ready (${code} ${reason.toString()})`)));
      socket.once("message", (data, isBinary) => {
        clearTimeout(timer);
        socket.removeAllListeners("close");
        socket.removeListener("error", fail);
        socket.on("error", () => undefined);
        if (isBinary) return reject(new Error(`${name}: binary first message`));
        let msg: any;
        try {
          msg = JSON.parse(data.toString());
        } catch {
          return reject(new Error(`${name}: first message is not JSON: ${data.toString()}`));
        }
        const checked = schema.message("server", msg);
        if (!checked.ok || msg.type !== "ready") {
          return reject(new Error(`${name}: first message is not a valid ready message: ${JSON.stringify(msg)} ${JSON.stringify(checked.issues)}`));
        }
        resolve(new TauTestClient(name, socket, msg as ReadyMessage));
      });
    });
  }

  private receive(data: WebSocket.RawData, isBinary: boolean): void {
    if (isBinary) {
      this.recordInvalid(`binary frame from server`);
      return;
    }
    const text = data.toString();
    let msg: any;
    try {
      msg = JSON.parse(text);
    } catch {
      this.recordInvalid(`non-JSON message: ${text.slice(0, 500)}`);
      return;
    }
    const respondsTo = msg?.type === "response" && typeof msg.id === "string" ? this.methodsById.get(msg.id) : undefined;
    const checked = schema.message("server", msg, respondsTo);
    if (!checked.ok) {
      const issues = checked.issues.slice(0, 5).map((i) => `${i.pointer}: ${i.message}`).join("; ");
      this.recordInvalid(`invalid ${checked.subject ?? msg?.type} message (${issues}): ${JSON.stringify(msg).slice(0, 1500)}`);
    }
    this.messages.push(msg);
    if (msg.type === "response" && typeof msg.id === "string") {
      const waiter = this.responseWaiters.get(msg.id);
      if (waiter) {
        this.responseWaiters.delete(msg.id);
        waiter.resolve(msg as Response);
      }
    }
    for (const listener of this.listeners) listener(msg);
    const index = this.messages.length - 1;
    this.waiters = this.waiters.filter((w) => {
      if (index >= w.from && w.predicate(msg)) {
        w.resolve(msg);
        return false;
      }
      return true;
    });
  }

  private recordInvalid(description: string): void {
    this.invalid.push(description);
    const error = new Error(`${this.name} received an invalid server message: ${description}`);
    for (const w of this.waiters) w.reject(error);
    this.waiters = [];
  }

  /** Throws if any received message failed schema validation. */
  assertAllValid(): void {
    if (this.invalid.length > 0) throw new Error(`${this.name} received invalid server messages:\n${this.invalid.join("\n")}`);
  }

  /**
   * Sends a request without waiting; the response promise resolves with the response message and
   * rejects on timeout or close. A request a test deliberately abandons (its connection is closed
   * on purpose) does not surface as an unhandled rejection.
   */
  send(method: string, params: unknown, id = `${this.name}-${this.nextId++}`): PendingRequest {
    this.methodsById.set(id, method);
    const response = new Promise<Response>((resolve, reject) => this.responseWaiters.set(id, { resolve, reject }));
    this.sendRaw(JSON.stringify({ version: 18, type: "request", id, method, params }));
    const timed = this.withTimeout(response, `response to ${method} (${id})`);
    timed.catch(() => undefined);
    return { id, method, response: timed };
  }

  /** Calls `listener` with every later server message (e.g. to answer client-tool calls). */
  onMessage(listener: (m: any) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Whether a response to request `id` has arrived. */
  hasResponse(id: string): boolean {
    return this.messages.some((m) => m.type === "response" && m.id === id);
  }

  /** Arrival index of the response to request `id` (-1 if none). */
  responseIndex(id: string): number {
    return this.messages.findIndex((m) => m.type === "response" && m.id === id);
  }

  sendRaw(text: string): void {
    this.socket.send(text);
  }

  /** Sends a request and resolves with its response (success or error). */
  request(method: string, params: unknown): Promise<Response> {
    return this.send(method, params).response;
  }

  /** Sends a request and resolves with its result; fails with the error if the response is an error. */
  async call<T = any>(method: string, params: unknown): Promise<T> {
    const response = await this.request(method, params);
    if (!response.ok) throw new Error(`${method} failed: ${JSON.stringify(response.error)}`);
    return response.result as T;
  }

  /** Sends a request that must fail; resolves with the error object. */
  async fail(method: string, params: unknown): Promise<ErrorObject> {
    return errorOf(await this.request(method, params), method);
  }

  /** Index to pass as `since` so that `waitFor` ignores everything already received. */
  mark(): number {
    return this.messages.length;
  }

  /**
   * Resolves with the first message (received at index ≥ `since`, default 0) matching `predicate`;
   * fails with `description` after the timeout, on close, or on any invalid message.
   */
  waitFor<T = any>(predicate: (m: any) => boolean, description: string, options: { since?: number; timeoutMs?: number } = {}): Promise<T> {
    this.assertAllValid();
    const from = options.since ?? 0;
    const found = this.messages.slice(from).find(predicate);
    if (found) return Promise.resolve(found);
    if (this.closedInfo) return Promise.reject(new Error(`${this.name}: connection closed while waiting for ${description}`));
    const promise = new Promise<T>((resolve, reject) => this.waiters.push({ predicate, from, resolve, reject }));
    return this.withTimeout(promise, description, options.timeoutMs);
  }

  /** Waits for a session.delta of the session containing a change that matches `change`. */
  waitForChange(sessionId: string, change: (c: Change) => boolean, description: string, since?: number): Promise<SessionDeltaMessage> {
    return this.waitFor<SessionDeltaMessage>(
      (m) => m.type === "session.delta" && m.sessionId === sessionId && m.delta.type === "snapshot.patch" && m.delta.changes.some(change),
      `${description} (session ${sessionId})`,
      { since },
    );
  }

  /** Waits until a `turn.set` delta shows the given turn (or any turn) running. */
  waitForTurnRunning(sessionId: string, userHistoryEntryId?: string, since?: number): Promise<SessionDeltaMessage> {
    return this.waitForChange(
      sessionId,
      (c) => c.type === "turn.set" && c.turn.state === "running" && (userHistoryEntryId === undefined || c.turn.userHistoryEntryId === userHistoryEntryId),
      `turn ${userHistoryEntryId ?? "(any)"} running`,
      since,
    );
  }

  /** Messages of one type (and session), in arrival order. */
  messagesOf<T = any>(type: string, sessionId?: string, since = 0): T[] {
    return this.messages.slice(since).filter((m) => m.type === type && (sessionId === undefined || m.sessionId === sessionId));
  }

  deltas(sessionId: string, since = 0): SessionDeltaMessage[] {
    return this.messagesOf<SessionDeltaMessage>("session.delta", sessionId, since);
  }

  /** All patch changes of a session received so far, flattened in order. */
  changes(sessionId: string, since = 0): Change[] {
    return this.deltas(sessionId, since).flatMap((d) => (d.delta.type === "snapshot.patch" ? d.delta.changes : []));
  }

  async initialize(tools?: ClientToolDefinition[]): Promise<Response> {
    return this.request("initialize", { client: { name: "tau-host-tests", version: "1", ...(tools ? { tools } : {}) } });
  }

  async createSession(cwd: string, extra: Record<string, unknown> = {}): Promise<string> {
    const result = await this.call<{ sessionId: string }>("session.create", {
      executionEnvironment: { kind: "local", cwd },
      attributes: {},
      ...extra,
    });
    return result.sessionId;
  }

  snapshot(sessionId: string): Promise<Snapshot> {
    return this.call<Snapshot>("session.snapshot", { sessionId });
  }

  get closeInfo(): { code: number; reason: string } | undefined {
    return this.closedInfo;
  }

  closed(): Promise<{ code: number; reason: string }> {
    return this.closedPromise;
  }

  /** Closes the socket and waits for the close to complete. */
  async close(): Promise<void> {
    if (this.closedInfo) return;
    this.socket.close();
    await this.withTimeout(this.closedPromise, `${this.name} close`, 5_000).catch(() => this.socket.terminate());
  }

  private withTimeout<T>(promise: Promise<T>, description: string, timeoutMs = DEFAULT_WAIT_MS): Promise<T> {
    let timer: NodeJS.Timeout;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        const recent = this.messages.slice(-5).map((m) => JSON.stringify(m).slice(0, 300));
        reject(new Error(`${this.name}: timed out after ${timeoutMs} ms waiting for ${description}; last messages:\n${recent.join("\n")}`));
      }, timeoutMs);
    });
    return Promise.race([promise, timeout]).finally(() => clearTimeout(timer)) as Promise<T>;
  }
}

/** The error object of a response that must be an error. */
export function errorOf(response: Response, what = "request"): ErrorObject {
  if (response.ok) throw new Error(`${what} was expected to fail but succeeded: ${JSON.stringify(response.result).slice(0, 500)}`);
  return response.error;
}

/** The result of a response that must be a success. */
export function resultOf<T = any>(response: Response, what = "request"): T {
  if (!response.ok) throw new Error(`${what} failed: ${JSON.stringify(response.error)}`);
  return response.result as T;
}

/** Options every suite passes: the host checks its own outgoing messages too. */
export type TestHostOptions = TauHostOptions & { validateOutgoing?: boolean };

/**
 * One embedded host per test (or suite) with the clients connected to it and a temporary working
 * directory; `dispose` closes everything, checks that no client saw an invalid message, and
 * removes the directory.
 */
export class HostHarness {
  readonly clients: TauTestClient[] = [];
  readonly dirs: string[] = [];
  host!: RunningTauHost;
  private hostRunning = false;
  /** A real, canonical (symlink-free) temporary directory used as sessions' cwd. */
  readonly cwd: string;

  constructor() {
    this.cwd = this.tempDir("tau-host-cwd-");
  }

  tempDir(prefix = "tau-host-"): string {
    const dir = realpathSync(mkdtempSync(join(tmpdir(), prefix)));
    this.dirs.push(dir);
    return dir;
  }

  async start(options: TestHostOptions = {}): Promise<RunningTauHost> {
    const merged: TestHostOptions = { port: 0, streamDelayMs: 0, validateOutgoing: true, ...options };
    this.host = await startTauHost(merged);
    this.hostRunning = true;
    return this.host;
  }

  /** Closes the running host (once); clients see their connections end. */
  async closeHost(): Promise<void> {
    if (!this.hostRunning) return;
    this.hostRunning = false;
    await this.host.close();
  }

  async connect(name?: string): Promise<TauTestClient> {
    const client = await TauTestClient.connect(this.host.url, name);
    this.clients.push(client);
    return client;
  }

  /** Connects, initializes (optionally advertising tools) and creates a session in `cwd`. */
  async connectWithSession(options: { name?: string; tools?: ClientToolDefinition[]; cwd?: string } = {}): Promise<{ client: TauTestClient; sessionId: string }> {
    const client = await this.connect(options.name);
    resultOf(await client.initialize(options.tools), "initialize");
    const sessionId = await client.createSession(options.cwd ?? this.cwd);
    return { client, sessionId };
  }

  async dispose(): Promise<void> {
    const invalid = this.clients.flatMap((c) => c.invalid.map((i) => `${c.name}: ${i}`));
    await Promise.allSettled(this.clients.map((c) => c.close()));
    this.clients.length = 0;
    await this.closeHost();
    for (const dir of this.dirs) rmSync(dir, { recursive: true, force: true });
    this.dirs.length = 0;
    if (invalid.length > 0) throw new Error(`invalid server messages:\n${invalid.join("\n")}`);
  }
}

/** An embedded host on a free port, closed after the test; the test may close it first (it closes once). */
export async function startHostClosedAfterTest(cleanups: Cleanups, options: TauHostOptions = {}): Promise<RunningTauHost> {
  const running = await startTauHost({ port: 0, ...options });
  let closing: Promise<void> | undefined;
  const close = () => (closing ??= running.close());
  cleanups.push(close);
  return { url: running.url, host: running.host, port: running.port, close };
}

/** What each test gets from `hostWithSessionPerTest`. */
export interface HostWithSession {
  harness: HostHarness;
  client: TauTestClient;
  sessionId: string;
}

/**
 * Before each test of the file: a fresh host with one initialized client and a session in the
 * harness's cwd, handed to `use` (which keeps it for the test); after each test: all disposed.
 */
export function hostWithSessionPerTest(use: (fresh: HostWithSession) => void): void {
  let harness: HostHarness | undefined;
  beforeEach(async () => {
    harness = new HostHarness();
    await harness.start();
    use({ harness, ...(await harness.connectWithSession()) });
  });
  afterEach(async () => {
    await harness?.dispose();
  });
}

/** A session's snapshot as the Tau host at `hostUrl` has it, read by a client of its own. */
export async function snapshotOnHost(hostUrl: string, sessionId: string): Promise<Snapshot> {
  const tau = await TauTestClient.connect(hostUrl);
  try {
    await tau.initialize();
    return await tau.snapshot(sessionId);
  } finally {
    await tau.close();
  }
}

/** The committed assistant messages of a snapshot, in order. */
export function assistantMessages(snapshot: Snapshot): any[] {
  return snapshot.messages.filter((m) => m.message.role === "assistant" && m.state === "committed").map((m) => m.message);
}

/** The text of a message payload's text blocks (or its string content). */
export function textOf(payload: any): string {
  if (typeof payload.content === "string") return payload.content;
  return (payload.content as any[]).filter((b) => b.type === "text").map((b) => b.text).join("");
}

/** The text of each user message of a snapshot, in order. */
export function userTexts(snapshot: Snapshot): string[] {
  return snapshot.messages.filter((m) => m.message.role === "user").map((m) => textOf(m.message));
}

/** Resolves after `ms` (used only to give a wrong behaviour the chance to show, never as an assertion). */
export const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

export type { ServerMessage };
