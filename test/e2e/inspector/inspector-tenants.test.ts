import { Agent, request as httpRequest } from "node:http";
import { describe, expect, it } from "vitest";
import { TokenRegistry } from "../../../src/gateway/auth/tokens.js";
import type { ConnectionInfo } from "../../../src/gateway/inspector/connection-trace.js";
import { AskTestClient } from "../../support/ask-client.js";
import { openSession, runTurn } from "../../support/ask-events.js";
import { cleanupsAfterEach } from "../../support/cleanups.js";
import { CodexTestClient } from "../../support/codex-client.js";
import { watchInspectorFeed } from "../../support/inspector-feed-watch.js";
import { SseTestClient } from "../../support/sse-client.js";
import { startInspectorGateway, type InspectorGateway } from "../../support/inspector-gateway.js";

/**
 * The inspector with tokens: an operator sees every tenant's traffic; any other token opens it
 * too but sees only its own tenant's connections and frames — over the live feed, its resume, the
 * connections list and the downloads — whatever transport the traffic took (WebSocket, POST /rpc,
 * the event stream).
 */

const cleanups = cleanupsAfterEach();
const TOKENS = { ops: "ops-secret", a: "alice-secret", b: "bob-secret" };
const tokens = () =>
  TokenRegistry.parse(
    JSON.stringify([
      { id: "ops", token: TOKENS.ops, tenant: "ops", operator: true },
      { id: "alice", token: TOKENS.a, tenant: "a" },
      { id: "bob", token: TOKENS.b, tenant: "b" },
    ]),
    "tokens.json",
  );
const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

/** POSTs JSON-RPC bodies to /rpc one after another over one kept-alive connection, each with its own token. */
async function postOverOneConnection(gw: InspectorGateway, calls: { token: string; body: unknown }[]) {
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  cleanups.push(() => agent.destroy());
  const reused: boolean[] = [];
  for (const call of calls) {
    await new Promise<void>((resolve, reject) => {
      const req = httpRequest(`${gw.baseUrl}/rpc`, { method: "POST", agent, headers: { "content-type": "application/json", ...bearer(call.token) } }, (res) => {
        res.resume();
        res.once("end", () => (res.statusCode === 200 ? resolve() : reject(new Error(`HTTP ${res.statusCode}`))));
      });
      req.once("error", reject);
      req.end(JSON.stringify(call.body));
      reused.push(req.reusedSocket);
    });
  }
  return reused;
}

/** Reads the event stream of a session until its first event, then lets go. */
async function readOneEvent(gw: InspectorGateway, sessionId: string, token: string) {
  const stream = await SseTestClient.open(`${gw.baseUrl}/rpc/events?sessionId=${sessionId}`, { headers: bearer(token) });
  cleanups.push(() => stream.close());
  expect(stream.status).toBe(200);
  await stream.waitFor(() => stream.eventCount() > 0, "an event");
  stream.close();
}

describe("the inspector's tenant views", () => {
  it("shows a tenant only its own connections and frames over the live feed; an operator sees both", async () => {
    const gw = await cleanups.stopAfterTest(startInspectorGateway({ tokens: tokens() }));
    const feeds = {
      ops: await watchInspectorFeed(`${gw.baseUrl}/inspector/feed`, cleanups, TOKENS.ops),
      a: await watchInspectorFeed(`${gw.baseUrl}/inspector/feed`, cleanups, TOKENS.a),
      b: await watchInspectorFeed(`${gw.baseUrl}/inspector/feed`, cleanups, TOKENS.b),
    };

    // Tenant a: an Ask turn over a WebSocket, its events over the event stream, and POST /rpc.
    const alice = await AskTestClient.websocket(gw.wsUrl("/rpc"), { headers: bearer(TOKENS.a) });
    cleanups.push(() => alice.socket.close());
    const aliceSession = await openSession(alice);
    await runTurn(alice, aliceSession, "alice's secret prompt");
    await readOneEvent(gw, aliceSession, TOKENS.a);
    // Tenant b: a Codex turn, and a request over the same kept-alive HTTP connection as one of a's.
    const bob = await CodexTestClient.websocket(gw.wsUrl("/"), bearer(TOKENS.b));
    cleanups.push(() => bob.socket.close());
    await bob.initialize();
    const { thread } = await bob.request("thread/start", { cwd: gw.cwd });
    await bob.turn(thread.id, "bob's secret prompt");
    const list = { jsonrpc: "2.0", id: 1, method: "session/list", params: {} };
    const reused = await postOverOneConnection(gw, [
      { token: TOKENS.a, body: list },
      { token: TOKENS.b, body: { ...list, id: 2 } },
    ]);
    expect(reused).toEqual([false, true]);

    const all = () => [...feeds.ops.connections.values()];
    const tenantOf = (id: string) => feeds.ops.connections.get(id)?.tenant;
    await feeds.ops.until(() => all().filter((c) => c.transport === "http POST /rpc").length === 2 && all().some((c) => c.transport === "sse GET /rpc/events"), "every connection");
    await feeds.ops.until(() => feeds.ops.frames.some((f) => f.method === "turn/completed"), "b's turn");
    const byTransport = (tenant: string) => all().filter((c) => c.tenant === tenant).map((c) => c.transport).sort();
    expect(byTransport("a")).toEqual(["http POST /rpc", "sse GET /rpc/events", "websocket /rpc"]);
    expect(byTransport("b")).toEqual(["http POST /rpc", "websocket /"]);
    expect(all().every((c) => c.tenant === "a" || c.tenant === "b")).toBe(true);

    // Each tenant's feed holds exactly the operator's frames of that tenant's connections, no other.
    const key = (f: { connection: string; index: number }) => `${f.connection}#${f.index}`;
    for (const tenant of ["a", "b"] as const) {
      const expected = () => feeds.ops.frames.filter((f) => tenantOf(f.connection) === tenant).map(key);
      await feeds[tenant].until(() => feeds[tenant].frames.length >= expected().length, `${tenant}'s frames`);
      expect(feeds[tenant].frames.map(key)).toEqual(expected());
      expect([...feeds[tenant].connections.values()].every((c) => c.tenant === tenant)).toBe(true);
      // Numbered in the tenant's own sequence: every number is one of its own events, so no gap
      // counts the other tenant's traffic; and its connection ids count nothing either.
      expect(feeds[tenant].lastSeq()).toBe(feeds[tenant].received());
      expect([...feeds[tenant].connections.keys()].every((id) => /^[a-z]+-[0-9a-f]{8}$/.test(id))).toBe(true);
    }
    expect(feeds.ops.lastSeq()).toBe(feeds.ops.received());
    expect(feeds.ops.lastSeq()).toBeGreaterThan(feeds.a.lastSeq());
    const text = (feed: typeof feeds.a) => feed.frames.map((f) => f.message ?? f.raw).join("\n");
    expect(text(feeds.a)).toContain("alice's secret prompt");
    expect(text(feeds.a)).not.toContain("bob's secret prompt");
    expect(text(feeds.b)).toContain("bob's secret prompt");
    expect(text(feeds.b)).not.toContain("alice's secret prompt");
  });

  it("scopes the snapshot, the resume, the connections list and the downloads, and says whose view it is", async () => {
    const gw = await cleanups.stopAfterTest(startInspectorGateway({ tokens: tokens() }));
    const alice = await AskTestClient.websocket(gw.wsUrl("/rpc"), { headers: bearer(TOKENS.a) });
    cleanups.push(() => alice.socket.close());
    await openSession(alice);
    const bob = await AskTestClient.websocket(gw.wsUrl("/rpc"), { headers: bearer(TOKENS.b) });
    cleanups.push(() => bob.socket.close());
    await openSession(bob);
    const get = (url: string, token: string, headers: Record<string, string> = {}) => fetch(`${gw.baseUrl}${url}`, { headers: { ...bearer(token), ...headers } });
    const connections = async (token: string) => ((await (await get("/inspector/api/connections", token)).json()) as { connections: ConnectionInfo[] }).connections;

    const aliceSees = await connections(TOKENS.a);
    expect(aliceSees.map((c) => c.tenant)).toEqual(["a"]);
    const bobs = (await connections(TOKENS.ops)).find((c) => c.tenant === "b")!;
    expect((await connections(TOKENS.ops)).map((c) => c.tenant).sort()).toEqual(["a", "b"]);
    // Another tenant's download is a connection that does not exist; one's own downloads.
    expect((await get(`/inspector/api/connections/${bobs.id}/transcript`, TOKENS.a)).status).toBe(404);
    expect((await get(`/inspector/api/connections/${aliceSees[0]!.id}/transcript`, TOKENS.a)).status).toBe(200);
    expect((await get(`/inspector/api/connections/${bobs.id}/transcript`, TOKENS.ops)).status).toBe(200);

    expect(await (await get("/inspector/api/viewer", TOKENS.a)).json()).toEqual({ operator: false, tenant: "a" });
    expect(await (await get("/inspector/api/viewer", TOKENS.ops)).json()).toEqual({ operator: true, tenant: "ops" });

    // A feed resumed from the very start replays only alice's events.
    const snapshotAndResume = async (headers: Record<string, string>) => {
      const controller = new AbortController();
      cleanups.push(() => controller.abort());
      const response = await get("/inspector/feed", TOKENS.a, headers);
      const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader();
      let text = "";
      const deadline = Date.now() + 2000;
      // Everything kept is written at once; read what came, then let go.
      while (Date.now() < deadline) {
        const chunk = await Promise.race([reader.read(), new Promise<undefined>((resolve) => setTimeout(resolve, 300))]);
        if (!chunk || chunk.done) break;
        text += chunk.value;
      }
      controller.abort();
      return text;
    };
    const resumed = await snapshotAndResume({ "last-event-id": "0" });
    expect(resumed).toContain('"tenant":"a"');
    expect(resumed).not.toContain('"tenant":"b"');
    expect(resumed).not.toContain(`"connection":"${bobs.id}"`);
    const snapshot = await snapshotAndResume({});
    expect(snapshot).toMatch(/^id: \d+\nevent: snapshot\n/);
    expect(snapshot).not.toContain(`"connection":"${bobs.id}"`);
    expect(snapshot).not.toContain(`"id":"${bobs.id}"`);
  });

  it("lists a tenant only its own sessions, and leaves answering to operators", async () => {
    const gw = await cleanups.stopAfterTest(startInspectorGateway({ tokens: tokens() }));
    const sessionOf = async (token: string) => {
      const client = await AskTestClient.websocket(gw.wsUrl("/rpc"), { headers: bearer(token) });
      cleanups.push(() => client.socket.close());
      return openSession(client);
    };
    const [alices, bobs] = [await sessionOf(TOKENS.a), await sessionOf(TOKENS.b)];
    const get = (url: string, token: string) => fetch(`${gw.baseUrl}${url}`, { headers: bearer(token) });
    const listed = async (token: string) => ((await (await get("/inspector/api/sessions", token)).json()) as { sessions: { sessionId: string; tenant?: string }[] }).sessions;

    expect((await listed(TOKENS.a)).map((s) => [s.sessionId, s.tenant])).toEqual([[alices, "a"]]);
    expect((await listed(TOKENS.ops)).map((s) => s.sessionId).sort()).toEqual([alices, bobs].sort());
    expect((await get(`/inspector/api/sessions/${bobs}`, TOKENS.a)).status).toBe(404);
    expect((await get(`/inspector/api/sessions/${alices}`, TOKENS.a)).status).toBe(200);

    // A tenant gets no CSRF token, and even with the operator's and the page's Origin, its answer is refused.
    expect((await get("/inspector/api/csrf", TOKENS.a)).status).toBe(403);
    const csrf = (await (await get("/inspector/api/csrf", TOKENS.ops)).json()) as { header: string; token: string };
    const answer = (token: string) =>
      fetch(`${gw.baseUrl}/inspector/api/sessions/${alices}/interactions/act_1`, {
        method: "POST",
        headers: { ...bearer(token), origin: gw.baseUrl, "content-type": "application/json", [csrf.header]: csrf.token },
        body: JSON.stringify({ action: "approve" }),
      });
    const refused = await answer(TOKENS.a);
    expect(refused.status).toBe(403);
    expect(await refused.json()).toMatchObject({ error: "not_operator" });
    // The operator's gets past that check (to the interaction, which does not exist).
    const operator = await answer(TOKENS.ops);
    expect(operator.status).toBe(409);
  });
});

