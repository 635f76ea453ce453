import { mkdtempSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { buildGateway } from "../../../src/gateway/app.js";
import { ResyncBackoff } from "../../../src/bridge/resync-backoff.js";
import { SessionFactsReader } from "../../../src/ask/session-facts.js";
import { BridgeStack } from "../../../src/cli/bridge-stack.js";
import { TauUpstream } from "../../../src/tau/upstream.js";
import { LISTED_SESSION_FRESH_MS } from "../../../src/bridge/listed-sessions.js";
import { RawAcpClient } from "../../support/acp-raw-client.js";
import { AskTestClient } from "../../support/ask-client.js";
import { cleanupsAfterEach, type Cleanups } from "../../support/cleanups.js";
import { CodexTestClient } from "../../support/codex-client.js";
import { startCountingRelay, type CountingRelayOptions } from "../../support/counting-relay.js";
import { postRpc } from "../../support/http-gateway.js";
import { parsePrometheus, sampleValue } from "../../support/prometheus.js";
import { resultOf, startHostClosedAfterTest, TauTestClient } from "../../support/tau-client.js";

/**
 * How often the Ask surface asks the host for a whole `session.snapshot`, counted where it costs:
 * at a real host, through a relay that counts the requests reaching it. Clients that repeat cheap
 * requests must not make the gateway repeat expensive ones.
 */

const cleanups = cleanupsAfterEach();

async function gatewayBehindRelay(cleanups: Cleanups, relayOptions: CountingRelayOptions = {}, hostOptions: { streamDelayMs?: number } = {}) {
  const host = await startHostClosedAfterTest(cleanups, hostOptions);
  const relay = await startCountingRelay(host.url, relayOptions);
  cleanups.push(() => relay.close());
  const cwd = realpathSync(mkdtempSync(join(tmpdir(), "snapshot-fetches-")));
  cleanups.push(() => rmSync(cwd, { recursive: true, force: true }));
  const stack = new BridgeStack();
  cleanups.push(() => stack.close());
  await stack.start({ upstream: relay.url, defaultCwd: cwd, eventRetention: 10_000, interactionTimeoutMs: 300_000 }, [], () => undefined);
  const app = buildGateway({
    tauUpstream: { url: host.url },
    upstream: stack.upstream!,
    dialects: stack.gatewayDialects({ jsonrpcMember: "include" }),
  });
  cleanups.push(() => app.close());
  const baseUrl = await app.listen({ host: "127.0.0.1", port: 0 });
  const askClient = async () => {
    const client = await AskTestClient.websocket(`${baseUrl.replace("http://", "ws://")}/rpc`);
    cleanups.push(() => client.socket.terminate());
    return client;
  };
  const tauClient = async () => {
    const client = await TauTestClient.connect(host.url, "driver");
    cleanups.push(() => client.close());
    resultOf(await client.initialize());
    return client;
  };
  const snapshotFetches = async (reason: string) =>
    sampleValue(parsePrometheus(await (await fetch(`${baseUrl}/metrics`)).text()), "tau_gateway_session_snapshot_fetches_total", { reason });
  const codexClient = async () => {
    const client = await CodexTestClient.websocket(baseUrl.replace("http://", "ws://"));
    cleanups.push(() => client.socket.terminate());
    await client.initialize();
    return client;
  };
  const acpClient = async () => {
    const client = await RawAcpClient.connect(`${baseUrl.replace("http://", "ws://")}/acp`);
    cleanups.push(() => client.socket.terminate());
    await client.initialize();
    return client;
  };
  return { baseUrl, relay, cwd, askClient, tauClient, codexClient, acpClient, snapshotFetches };
}

type Gateway = Awaited<ReturnType<typeof gatewayBehindRelay>>;

it("reads each session the gateway has not opened once, however often and however concurrently clients list", async () => {
  const gw = await gatewayBehindRelay(cleanups);
  // Sessions made over another connection (as over /tau): the bridge has no hub for them.
  const driver = await gw.tauClient();
  const sessions: string[] = [];
  for (let i = 0; i < 8; i++) sessions.push(await driver.createSession(gw.cwd));

  const ask = await gw.askClient();
  const lists: Array<Promise<{ sessions: Array<{ sessionId: string }> }>> = [];
  for (let round = 0; round < 10; round++) {
    for (let i = 0; i < 10; i++) lists.push(ask.request("session/list", { limit: 100 }));
    for (let i = 0; i < 10; i++) lists.push(postRpc(gw.baseUrl, { jsonrpc: "2.0", id: i, method: "session/list", params: { limit: 100 } }).then((r) => r.body.result));
    await Promise.all(lists);
  }
  for (const list of await Promise.all(lists)) expect(list.sessions.map((s) => s.sessionId).sort()).toEqual([...sessions].sort());

  // 200 lists of 8 sessions: 1,600 snapshots before; one per session now.
  expect(gw.relay.count("session.list")).toBe(200);
  expect(gw.relay.count("session.snapshot")).toBe(sessions.length);
  expect(await gw.snapshotFetches("list")).toBe(sessions.length);
});

describe.each([
  { dialect: "Codex thread/list", list: async (gw: Gateway) => {
      const codex = await gw.codexClient();
      return async () => ((await codex.request("thread/list", { limit: 100 })) as { data: Array<{ id: string }> }).data.map((t) => t.id);
    } },
  { dialect: "ACP session/list", list: async (gw: Gateway) => {
      const acp = await gw.acpClient();
      return async () => ((await acp.request("session/list", {})).result as { sessions: Array<{ sessionId: string }> }).sessions.map((s) => s.sessionId);
    } },
])("$dialect", ({ list }) => {
  it("reads a session nobody here holds open at most once per few seconds, however often clients list", async () => {
    const gw = await gatewayBehindRelay(cleanups);
    const driver = await gw.tauClient();
    const sessions: string[] = [];
    for (let i = 0; i < 8; i++) sessions.push(await driver.createSession(gw.cwd));

    const listOnce = await list(gw);
    const startedAt = Date.now();
    for (let round = 0; round < 10; round++) {
      for (const ids of await Promise.all(Array.from({ length: 5 }, listOnce))) expect(ids.sort()).toEqual([...sessions].sort());
    }
    const elapsed = Date.now() - startedAt;

    // 50 lists of 8 sessions read 400 snapshots before; now each session once per freshness window.
    expect(gw.relay.count("session.snapshot")).toBeLessThanOrEqual(sessions.length * (Math.floor(elapsed / LISTED_SESSION_FRESH_MS) + 1));
    expect(gw.relay.count("session.snapshot")).toBeGreaterThanOrEqual(sessions.length);
  });
});

it("spaces out session.snapshot when a session's deltas keep failing to apply, and still catches up", async () => {
  let corrupting = true;
  // Every patch the gateway receives seems to skip a revision: each one is a gap (spec §6.2 rule 6).
  const fromHost = (message: Record<string, any>) =>
    corrupting && message.type === "session.delta" && message.delta.type === "snapshot.patch" ? { ...message, fromRevision: message.fromRevision + 1_000_000 } : message;
  const gw = await gatewayBehindRelay(cleanups, { fromHost }, { streamDelayMs: 15 });
  const ask = await gw.askClient();
  const { session } = await ask.request("session/create", {});
  const sessionId: string = session.sessionId;
  await ask.request("session/subscribe", { sessionId });

  // A reply streamed in about 60 chunks over about a second: about 60 deltas, each one a gap.
  const reply = "word ".repeat(100);
  await ask.request("session/send", { sessionId, content: reply });
  await ask.waitForEvent(sessionId, "turn.completed");
  corrupting = false;

  const fetched = gw.relay.count("session.snapshot");
  // Before: one snapshot per delta (about 60). Now: at once, then after 0.25, 0.5, 1, 2, … s.
  expect(fetched).toBeGreaterThanOrEqual(1);
  expect(fetched).toBeLessThanOrEqual(6);
  expect(await gw.snapshotFetches("resync")).toBe(fetched);
  const completed = ask.eventsOf(sessionId).filter((e) => e.type === "turn.completed");
  expect(completed).toHaveLength(1);
  expect((completed[0]!.payload as { response: string }).response).toBe(`You said: ${reply}`);

  // Deltas that apply again are applied as they come, without another snapshot.
  await ask.request("session/send", { sessionId, content: "again" });
  await ask.waitFor(() => ask.eventsOf(sessionId).filter((e) => e.type === "turn.completed").length === 2, "the second turn.completed");
  expect(gw.relay.count("session.snapshot")).toBe(fetched);
});

it("backs off reading a session whose snapshot cannot be read, and reads it again once the wait is over", async () => {
  const host = await startHostClosedAfterTest(cleanups);
  const relay = await startCountingRelay(host.url);
  cleanups.push(() => relay.close());
  const upstream = new TauUpstream({ url: relay.url, client: { name: "facts-tests", version: "1" }, reconnect: false });
  cleanups.push(() => upstream.close());
  await upstream.start();
  let now = 0;
  const facts = new SessionFactsReader({ readSnapshot: (sessionId) => upstream.request("session.snapshot", { sessionId }), retryAfterMs: 1000, maxRetryAfterMs: 4000, now: () => now });

  // A session the host lists but cannot serve answers not_found every time.
  const reads = await Promise.all(Array.from({ length: 5 }, () => facts.read("missing-session")));
  expect(reads).toEqual([undefined, undefined, undefined, undefined, undefined]);
  expect(relay.count("session.snapshot")).toBe(1);
  for (const [at, expected] of [[999, 1], [1000, 2], [2999, 2], [3000, 3], [6999, 3], [7000, 4], [10_999, 4], [11_000, 5]] as const) {
    now = at;
    expect(await facts.read("missing-session")).toBeUndefined();
    expect(relay.count("session.snapshot"), `at ${at} ms`).toBe(expected);
  }
  expect(facts.snapshotReads).toBe(5);

  // A readable session is read once and then known.
  const driver = await TauTestClient.connect(host.url, "driver");
  cleanups.push(() => driver.close());
  resultOf(await driver.initialize());
  const sessionId = await driver.createSession(tmpdir());
  const [first, second] = await Promise.all([facts.read(sessionId), facts.read(sessionId)]);
  expect(first).toEqual({ tenant: undefined, createdAt: expect.any(Number), model: expect.any(String), ephemeral: false });
  expect(second).toBe(first);
  expect(await facts.read(sessionId)).toBe(first);
  expect(relay.count("session.snapshot")).toBe(6);
});

it("waits longer before each repeated resync, up to a ceiling, and starts over after a quiet spell", () => {
  let now = 0;
  const backoff = new ResyncBackoff({ firstDelayMs: 250, maxMs: 2000, quietMs: 10_000, now: () => now });
  const delays: number[] = [];
  for (let i = 0; i < 7; i++) delays.push(backoff.next());
  expect(delays).toEqual([0, 250, 500, 1000, 2000, 2000, 2000]);
  // The last fetch goes at 2,000 ms; quiet means 10 s after that.
  now = 12_000;
  expect(backoff.next()).toBe(2000);
  now = 24_001;
  expect(backoff.next()).toBe(0);
  expect(backoff.next()).toBe(250);
});
