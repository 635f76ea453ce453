import { once } from "node:events";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import WebSocket from "ws";
import type { SessionDeltaMessage, Snapshot } from "../../../generated/tau-v18.js";
import { startTauHost, type RunningTauHost } from "../../../src/host/index.js";
import { TauCodec } from "../../../src/tau/codec.js";
import { applyDelta } from "../../../src/tau/delta-applier.js";
import { TAU_V18_METHODS } from "../../support/messages.js";

/**
 * The embedded Tau host's basics over real WebSockets: `ready`, the envelope error table, the
 * close codes and one plain streamed turn end to end (the `tau-gateway host` command is tested in
 * cli-host.test.ts). Every message the host sends is checked against the v18 schema here as well.
 */

const codec = new TauCodec();
/** Server messages are checked against the schema on arrival; tests then read them loosely. */
type Message = any;

/** A raw Tau client: records every server message (schema-checked) and waits for matching ones. */
class RawClient {
  readonly received: Message[] = [];
  readonly closed: Promise<{ code: number; reason: string }>;
  private readonly methods = new Map<string, string>();
  private readonly listeners = new Set<() => void>();
  private nextId = 1;

  private constructor(readonly socket: WebSocket) {
    socket.on("message", (data) => {
      const message = JSON.parse(String(data));
      const respondsTo = message.type === "response" && typeof message.id === "string" ? this.methods.get(message.id) : undefined;
      const verdict = codec.checkServerMessage(message, respondsTo);
      if (!verdict.ok) throw new Error(`invalid server message ${JSON.stringify(message).slice(0, 300)}: ${JSON.stringify(verdict.issues)}`);
      this.received.push(message);
      for (const listener of [...this.listeners]) listener();
    });
    this.closed = new Promise((resolve) => socket.on("close", (code, reason) => resolve({ code, reason: String(reason) })));
  }

  static async connect(url: string): Promise<RawClient> {
    const socket = new WebSocket(url);
    const client = new RawClient(socket);
    await once(socket, "open");
    return client;
  }

  sendText(text: string): void {
    this.socket.send(text);
  }

  /** Sends a request and resolves with its response (never rejects on an error response). */
  request(method: string, params: unknown): Promise<Message> {
    const id = `r${this.nextId++}`;
    this.methods.set(id, method);
    this.socket.send(JSON.stringify({ version: 18, type: "request", id, method, params }));
    return this.waitFor((m) => m.type === "response" && m.id === id);
  }

  /** The first message (already received or future) that satisfies `predicate`. */
  waitFor(predicate: (message: Message) => boolean, timeoutMs = 10_000): Promise<Message> {
    return new Promise((resolve, reject) => {
      const check = () => {
        const found = this.received.find(predicate);
        if (!found) return false;
        this.listeners.delete(check);
        clearTimeout(timer);
        resolve(found);
        return true;
      };
      const timer = setTimeout(() => {
        this.listeners.delete(check);
        reject(new Error(`no matching message within ${timeoutMs} ms; received: ${JSON.stringify(this.received).slice(-2000)}`));
      }, timeoutMs);
      if (!check()) this.listeners.add(check);
    });
  }

  close(): void {
    this.socket.close();
  }
}

const clients: RawClient[] = [];
async function connect(url: string): Promise<RawClient> {
  const client = await RawClient.connect(url);
  clients.push(client);
  return client;
}

afterEach(() => {
  for (const client of clients.splice(0)) client.socket.terminate();
});

describe("embedded Tau host", () => {
  let host: RunningTauHost;
  let workdir: string;

  beforeAll(async () => {
    workdir = mkdtempSync(join(tmpdir(), "tau-host-basics-"));
    host = await startTauHost({ port: 0, validateOutgoing: true });
  });

  afterAll(async () => {
    await host?.close();
    rmSync(workdir, { recursive: true, force: true });
  });

  it("sends ready first, listing the 30 v18 methods in Tau's order", async () => {
    const client = await connect(host.url);
    const ready = await client.waitFor(() => true);
    expect(client.received[0]).toBe(ready);
    expect(ready).toEqual({ version: 18, type: "ready", methods: TAU_V18_METHODS });
    const init = await client.request("initialize", { client: { name: "test", version: "1" } });
    expect(init.result).toEqual({ protocolVersion: 18, methods: TAU_V18_METHODS, alreadyInitialized: false });
    const again = await client.request("initialize", { client: { name: "test", version: "1" } });
    expect(again.result.alreadyInitialized).toBe(true);
  });

  it("answers every row of the envelope error table and keeps the connection open", async () => {
    const client = await connect(host.url);
    const rows: Array<{ send: string; code: string; message: string | RegExp; id: string | null }> = [
      { send: "", code: "invalid_request", message: "request line cannot be empty", id: null },
      { send: " \t\r\n", code: "invalid_request", message: "request line cannot be empty", id: null },
      { send: "{not json", code: "parse_error", message: "failed to parse JSON request line", id: null },
      { send: "[1,2]", code: "invalid_request", message: "request must be a JSON object", id: null },
      { send: JSON.stringify({ version: 18, type: "request", id: "", method: "session.list", params: {} }), code: "invalid_request", message: "request id must be a non-empty string", id: null },
      { send: JSON.stringify({ version: 18, type: "request", id: 7, method: "session.list", params: {} }), code: "invalid_request", message: "request id must be a non-empty string", id: null },
      { send: JSON.stringify({ version: 17, type: "request", id: "v", method: "session.list", params: {} }), code: "invalid_request", message: "unsupported session protocol version: 17", id: "v" },
      { send: JSON.stringify({ version: 18, type: "notify", id: "t", method: "session.list", params: {} }), code: "invalid_request", message: 'request.type must be "request"', id: "t" },
      { send: JSON.stringify({ version: 18, type: "request", id: "m", method: 3, params: {} }), code: "invalid_request", message: "request.method must be a string", id: "m" },
      { send: JSON.stringify({ version: 18, type: "request", id: "p", method: "session.list" }), code: "invalid_request", message: "request.params is required", id: "p" },
      { send: JSON.stringify({ version: 18, type: "request", id: "u", method: "session.startGoal", params: {} }), code: "method_not_found", message: "unsupported method: session.startGoal", id: "u" },
      {
        send: JSON.stringify({ version: 18, type: "request", id: "x", method: "session.exec", params: { sessionId: "s", execId: "", command: "true" } }),
        code: "invalid_params",
        message: /^session\.exec params\.execId /,
        id: "x",
      },
    ];
    for (const row of rows) {
      const before = client.received.length;
      client.sendText(row.send);
      const response = await client.waitFor((m) => client.received.indexOf(m) >= before && m.type === "response");
      expect(response.ok, row.send).toBe(false);
      expect(response.id, row.send).toBe(row.id);
      expect(response.error.code, row.send).toBe(row.code);
      if (typeof row.message === "string") expect(response.error.message, row.send).toBe(row.message);
      else expect(response.error.message, row.send).toMatch(row.message);
    }
    const parseError = client.received.find((m) => m.error?.code === "parse_error");
    expect(typeof parseError.error.data.cause).toBe("string");
    const list = await client.request("session.list", {});
    expect(list.ok).toBe(true);
  });

  it("closes a binary frame with 1003", async () => {
    const client = await connect(host.url);
    await client.waitFor((m) => m.type === "ready");
    client.socket.send(Buffer.from([1, 2, 3]), { binary: true });
    expect(await client.closed).toEqual({ code: 1003, reason: "session protocol requires text messages" });
  });

  it("answers unknown sessions with not_found and the session id", async () => {
    const client = await connect(host.url);
    const response = await client.request("session.snapshot", { sessionId: "missing-session" });
    expect(response.error).toEqual({ code: "not_found", message: "session not found", data: { sessionId: "missing-session" } });
    const unobserve = await client.request("session.unobserve", { sessionId: "missing-session" });
    expect(unobserve.error).toEqual({ code: "not_found", message: "session not found", data: { sessionId: "missing-session" } });
  });

  it("refuses execution environments it cannot serve with invalid_params", async () => {
    const client = await connect(host.url);
    const sprite = await client.request("session.create", { executionEnvironment: { kind: "fly-sprite", spriteName: "box", cwd: "/work" }, attributes: {} });
    expect(sprite.error.code).toBe("invalid_params");
    expect(sprite.error.message).toMatch(/fly-sprite.*not supported/);
    const missing = await client.request("session.create", { executionEnvironment: { kind: "local", cwd: join(workdir, "nope") }, attributes: {} });
    expect(missing.error.code).toBe("invalid_params");
    expect(missing.error.message).toMatch(/cwd/);
  });

  it("runs a plain turn: streamed deltas, committed reply, settled ledger, idle again", async () => {
    const client = await connect(host.url);
    const created = await client.request("session.create", { executionEnvironment: { kind: "local", cwd: workdir }, attributes: { source: "test" } });
    const sessionId: string = created.result.sessionId;
    const observed = await client.request("session.observe", { sessionId });
    let snapshot: Snapshot = observed.result.snapshot;
    expect(snapshot.lifecycle).toBe("idle");
    expect(snapshot.executionEnvironment).toMatchObject({ kind: "local", cwd: workdir });
    expect(observed.result.pendingUserMessages).toEqual({ revision: 1, messages: [] });

    const submitted = await client.request("session.submit", { sessionId, text: "hello there, host", historyEntryId: "  entry-1 " });
    expect(submitted.result).toEqual({ userHistoryEntryId: "entry-1", turn: { status: "completed", stopReason: "stop" } });

    const deltas: SessionDeltaMessage[] = client.received.filter((m) => m.type === "session.delta" && m.sessionId === sessionId && m.toRevision > snapshot.revision);
    for (const delta of deltas) snapshot = applyDelta(snapshot, delta).snapshot;
    const appends = deltas.flatMap((d) => (d.delta.type === "snapshot.patch" ? d.delta.changes : [])).filter((c) => c.type === "message.content.append");
    expect(appends.length).toBeGreaterThan(1);
    expect(appends.every((c) => c.type === "message.content.append" && (c.text ?? "").length <= 8)).toBe(true);
    expect(deltas.map((d) => d.cause.type)).toEqual(expect.arrayContaining(["user-message", "assistant-stream", "assistant-message", "agent-run"]));

    const authoritative = await client.request("session.snapshot", { sessionId });
    expect(snapshot).toEqual(authoritative.result);
    expect(snapshot.lifecycle).toBe("idle");
    expect(snapshot.turns["entry-1"]).toEqual({ userHistoryEntryId: "entry-1", state: "settled", outcome: { status: "completed", stopReason: "stop" } });
    const reply = snapshot.messages[snapshot.messages.length - 1];
    expect(reply).toMatchObject({
      state: "committed",
      modelVisible: true,
      message: {
        role: "assistant",
        content: [{ type: "text", text: "You said: hello there, host" }],
        api: "scripted",
        provider: "tau-gateway",
        model: "scripted-1",
        stopReason: "stop",
        usage: { input: 3, output: 5, totalTokens: 8 },
      },
    });
    expect(snapshot.costTotal).toBeCloseTo(0.000008, 12);
    const sequences = snapshot.timeline.items.map((i) => i.sequence);
    expect(sequences).toEqual([...sequences].sort((a, b) => a - b));
    expect(new Set(sequences).size).toBe(sequences.length);

    const list = await client.request("session.list", {});
    expect(list.result.sessions).toContainEqual({ sessionId, lifecycle: "idle" });
  });
});

describe("embedded Tau host with an auth token", () => {
  let host: RunningTauHost;

  beforeAll(async () => {
    host = await startTauHost({ port: 0, authToken: "s3cret", validateOutgoing: true });
  });

  afterAll(async () => {
    await host?.close();
  });

  it("accepts the upgrade and then closes 1008 without the right tau_token", async () => {
    for (const url of [host.url, `${host.url}/?tau_token=wrong`]) {
      const client = await connect(url);
      expect(await client.closed).toEqual({ code: 1008, reason: "unauthorized" });
      expect(client.received).toEqual([]);
    }
    const client = await connect(`${host.url}/any/path?tau_token=s3cret`);
    expect((await client.waitFor((m) => m.type === "ready")).methods).toHaveLength(30);
  });
});
