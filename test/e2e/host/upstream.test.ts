import { mkdtempSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { SessionCreateParams } from "../../../generated/tau-v18.js";
import type { TauHostOptions } from "../../../src/host/index.js";
import {
  reconnectDelay,
  TauResponseError,
  TauUpstream,
  UpstreamUnavailableError,
  UpstreamVersionError,
  type TauUpstreamOptions,
  type UpstreamServerMessage,
} from "../../../src/tau/upstream.js";
import { cleanupsAfterEach } from "../../support/cleanups.js";
import { answerInitialize, startFakeTauPeer, success, type FakeTauPeer } from "../../support/fake-tau-peer.js";
import { startHostClosedAfterTest } from "../../support/tau-client.js";

/**
 * The gateway's own Tau connection against the embedded host over real sockets: requests and
 * errors, streamed messages, cancellation, the host going away and coming back, and a peer of
 * another protocol version.
 */

const cleanups = cleanupsAfterEach();

function tempDir(prefix: string): string {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), prefix)));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

const host = (options: TauHostOptions = {}) => startHostClosedAfterTest(cleanups, options);

function upstream(url: string, options: Partial<TauUpstreamOptions> = {}): TauUpstream {
  const client = new TauUpstream({ url, client: { name: "upstream-tests", version: "1" }, ...options });
  cleanups.push(() => client.close());
  return client;
}

async function peer(options: Parameters<typeof startFakeTauPeer>[0]): Promise<FakeTauPeer> {
  const running = await startFakeTauPeer(options);
  cleanups.push(() => running.close());
  return running;
}

/** The first value a subscribe-style API delivers. */
function next<T>(subscribe: (listener: (value: T) => void) => () => void): Promise<T> {
  return new Promise((resolve) => {
    const off = subscribe((value) => {
      off();
      resolve(value);
    });
  });
}

const createParams = (cwd: string): SessionCreateParams => ({ executionEnvironment: { kind: "local", cwd }, attributes: {} });

describe("TauUpstream against the embedded host", () => {
  it("connects, initializes and correlates requests with validated results", async () => {
    const h = await host();
    const up = upstream(h.url);
    const connected = next(up.onConnected.bind(up));
    expect(up.connected).toBe(false);
    await up.start();
    expect(up.connected).toBe(true);
    expect(await connected).toEqual({ reconnected: false });

    const cwd = tempDir("upstream-cwd-");
    // Concurrent requests resolve with their own results.
    const [a, b] = await Promise.all([
      up.request("session.create", createParams(cwd)),
      up.request("session.create", createParams(cwd)),
    ]);
    expect(a.sessionId).not.toBe(b.sessionId);
    const list = await up.request("session.list", {});
    expect(list.sessions.map((s) => s.sessionId).sort()).toEqual([a.sessionId, b.sessionId].sort());
    expect(up.stats).toEqual({ reconnects: 0, invalidMessages: 0 });
  });

  it("rejects error responses with TauResponseError carrying Tau's code, method and data", async () => {
    const h = await host();
    const up = upstream(h.url);
    await up.start();
    const missing = await up.request("session.snapshot", { sessionId: "no-such-session" }).catch((e) => e);
    expect(missing).toBeInstanceOf(TauResponseError);
    expect(missing).toMatchObject({ code: "not_found", method: "session.snapshot", data: { sessionId: "no-such-session" } });

    const invalid: any = await up.request("session.create", { executionEnvironment: { kind: "local", cwd: "relative" }, attributes: {} }).catch((e) => e);
    expect(invalid).toBeInstanceOf(TauResponseError);
    expect(invalid.code).toBe("invalid_params");
    // The connection is still usable.
    expect(up.connected).toBe(true);
  });

  it("delivers streamed server messages (validated) to onMessage listeners", async () => {
    const h = await host();
    const up = upstream(h.url);
    await up.start();
    const sessionId = (await up.request("session.create", createParams(tempDir("upstream-cwd-")))).sessionId;
    await up.request("session.observe", { sessionId });
    const messages: UpstreamServerMessage[] = [];
    up.onMessage((m) => messages.push(m));
    const result = await up.request("session.submit", { sessionId, text: "stream me" });
    expect(result.turn.status).toBe("completed");
    const appended = messages
      .filter((m) => m.type === "session.delta" && m.sessionId === sessionId)
      .flatMap((m) => (m.type === "session.delta" && m.delta.type === "snapshot.patch" ? m.delta.changes : []))
      .filter((c) => c.type === "message.content.append")
      .map((c) => (c.type === "message.content.append" ? c.text ?? "" : ""))
      .join("");
    expect(appended).toBe("You said: stream me");
    expect(up.stats.invalidMessages).toBe(0);
  });

  it("rejects at once when the signal aborts, and keeps the connection usable", async () => {
    const h = await host();
    const up = upstream(h.url);
    await up.start();
    const sessionId = (await up.request("session.create", createParams(tempDir("upstream-cwd-")))).sessionId;

    const already = new AbortController();
    already.abort();
    await expect(up.request("session.list", {}, { signal: already.signal })).rejects.toMatchObject({ name: "AbortError" });

    const controller = new AbortController();
    const slow = up.request("session.submit", { sessionId, text: "/sleep 10000\nslow" }, { signal: controller.signal });
    controller.abort();
    await expect(slow).rejects.toMatchObject({ name: "AbortError" });
    // Tau has no per-request cancel: the turn keeps running until interrupted.
    const interrupted = await up.request("session.interrupt", { sessionId });
    expect(interrupted.interrupted).toBe(true);
    expect(up.connected).toBe(true);
  });

  it("fails open requests with UpstreamUnavailableError when the host goes away, and requests made while disconnected", async () => {
    const h = await host();
    const up = upstream(h.url, { reconnect: false });
    await up.start();
    const sessionId = (await up.request("session.create", createParams(tempDir("upstream-cwd-")))).sessionId;
    const messages: UpstreamServerMessage[] = [];
    up.onMessage((m) => messages.push(m));
    const open = up.request("session.submit", { sessionId, text: "/sleep 20000\nnever answered" });
    open.catch(() => undefined);
    // Wait until the turn really runs on the host before pulling the plug.
    await new Promise<void>((resolve) => {
      const off = up.onMessage((m) => {
        if (m.type === "session.delta" && m.delta.type === "snapshot.patch" && m.delta.changes.some((c) => c.type === "turn.set" && c.turn.state === "running")) {
          off();
          resolve();
        }
      });
    });
    const disconnected = next(up.onDisconnected.bind(up));
    await h.close();
    await expect(open).rejects.toBeInstanceOf(UpstreamUnavailableError);
    expect(typeof (await disconnected)).toBe("string");
    expect(up.connected).toBe(false);
    await expect(up.request("session.list", {})).rejects.toBeInstanceOf(UpstreamUnavailableError);
  });

  it("reconnects after the host restarts on the same port, re-initializes, and reports it", async () => {
    const stateDir = tempDir("upstream-state-");
    const cwd = tempDir("upstream-cwd-");
    const first = await host({ stateDir });
    const up = upstream(first.url);
    await up.start();
    const sessionId = (await up.request("session.create", createParams(cwd))).sessionId;

    const disconnected = next(up.onDisconnected.bind(up));
    const reconnected = next(up.onConnected.bind(up));
    await first.close();
    await disconnected;
    expect(up.connected).toBe(false);

    const second = await host({ port: first.port, stateDir });
    expect(await reconnected).toEqual({ reconnected: true });
    expect(up.connected).toBe(true);
    expect(up.stats.reconnects).toBe(1);
    // The new connection works and sees the persisted session.
    const list = await up.request("session.list", {});
    expect(list.sessions.map((s) => s.sessionId)).toContain(sessionId);
    expect(second.port).toBe(first.port);
  });

  it("sends the token as tau_token", async () => {
    const h = await host({ authToken: "s3cret" });
    const wrong = upstream(h.url, { token: "wrong", reconnect: false });
    const error = await wrong.start().catch((e) => e);
    expect(error).toBeInstanceOf(UpstreamUnavailableError);
    expect(error.message).toContain("1008");
    expect(error.message).not.toContain("wrong");
    const right = upstream(h.url, { token: "s3cret" });
    await right.start();
    expect(right.connected).toBe(true);
  });

  it("rejects start() with UpstreamUnavailableError when nothing listens", async () => {
    const h = await host();
    const url = h.url;
    await h.close();
    const up = upstream(url);
    await expect(up.start()).rejects.toBeInstanceOf(UpstreamUnavailableError);
    expect(up.connected).toBe(false);
    expect(up.unavailableReason).toMatch(/cannot connect/);
  });
});

describe("TauUpstream against scripted peers", () => {
  it("refuses a peer whose ready announces another protocol version", async () => {
    const v17 = await peer({ ready: { version: 17, type: "ready", methods: ["initialize"] } });
    const up = upstream(v17.url);
    const error = await up.start().catch((e) => e);
    expect(error).toBeInstanceOf(UpstreamVersionError);
    expect(error.version).toBe(17);
    expect(error.message).toMatch(/version 17.*18/);
    expect(up.connected).toBe(false);
    // It never sent initialize to a peer it cannot speak to.
    expect(v17.received).toEqual([]);
  });

  it("gives up on an initialize that is never answered, after the connect timeout", async () => {
    const silent = await peer({ onRequest: () => undefined });
    const up = upstream(silent.url, { connectTimeoutMs: 300, reconnect: false });
    const error = await up.start().catch((e) => e);
    expect(error).toBeInstanceOf(UpstreamUnavailableError);
    expect(error.message).toMatch(/no initialize answer .* within 300 ms/);
    expect(up.connected).toBe(false);
    expect(up.openRequests).toBe(0);
    // The attempt's socket is closed, not left open beside a later attempt.
    await silent.nextClose();
  });

  it("drops and counts invalid server messages, and fails a request whose response is invalid", async () => {
    const p = await peer({
      onRequest(request, socket) {
        if (answerInitialize(request, socket)) return;
        if (request.method === "session.list") {
          socket.send(JSON.stringify({ version: 18, type: "session.delta", sessionId: "s" })); // missing fields
          socket.send("not json");
          socket.send(Buffer.from([1, 2, 3]), { binary: true });
          socket.send(success(request.id, { sessions: [{ sessionId: "s", lifecycle: "idle" }] }));
        }
        if (request.method === "session.snapshot") socket.send(success(request.id, { not: "a snapshot" }));
      },
    });
    const logged: string[] = [];
    const up = upstream(p.url, { log: (level, message) => logged.push(`${level} ${message}`) });
    await up.start();
    const messages: UpstreamServerMessage[] = [];
    up.onMessage((m) => messages.push(m));
    expect(await up.request("session.list", {})).toEqual({ sessions: [{ sessionId: "s", lifecycle: "idle" }] });
    expect(messages).toEqual([]);
    expect(up.stats.invalidMessages).toBe(3);
    expect(logged.filter((l) => l.startsWith("warn") && l.includes("invalid"))).toHaveLength(3);

    const invalidResponse: any = await up.request("session.snapshot", { sessionId: "s" }).catch((e) => e);
    expect(invalidResponse).toBeInstanceOf(TauResponseError);
    expect(invalidResponse.code).toBe("internal_error");
    expect(up.stats.invalidMessages).toBe(4);
    expect(up.connected).toBe(true);
  });

  it("survives a listener that throws", async () => {
    const p = await peer({
      onRequest(request, socket) {
        if (answerInitialize(request, socket)) return;
        socket.send(JSON.stringify({ version: 18, type: "session.pendingUserMessages", sessionId: "s", state: { revision: 1, messages: [] } }));
        socket.send(success(request.id, { sessions: [] }));
      },
    });
    const up = upstream(p.url, { log: () => undefined });
    await up.start();
    const seen: string[] = [];
    up.onMessage(() => {
      throw new Error("listener bug");
    });
    up.onMessage((m) => seen.push(m.type));
    expect(await up.request("session.list", {})).toEqual({ sessions: [] });
    expect(seen).toEqual(["session.pendingUserMessages"]);
  });
});

describe("reconnectDelay", () => {
  it("doubles from 100 ms, caps at 5 s, and is randomised within half a step", () => {
    expect(reconnectDelay(0, () => 1)).toBe(100);
    expect(reconnectDelay(0, () => 0)).toBe(100);
    expect(reconnectDelay(3, () => 1)).toBe(800);
    expect(reconnectDelay(3, () => 0)).toBe(400);
    expect(reconnectDelay(20, () => 1)).toBe(5000);
    expect(reconnectDelay(20, () => 0)).toBe(2500);
  });
});
