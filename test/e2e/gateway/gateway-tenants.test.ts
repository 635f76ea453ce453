import { createHash } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TokenRegistry } from "../../../src/gateway/auth/tokens.js";
import { AskTestClient, rpcError } from "../../support/ask-client.js";
import { startSecureGateway, type SecureGateway } from "../../support/secure-gateway.js";
import { TauTestClient } from "../../support/tau-client.js";

/**
 * Tenants through a real gateway and embedded host, on both dialects: each tenant lists only its
 * own sessions, and another tenant's session answers exactly as a session that does not exist —
 * whether it was created over `/rpc` or `/tau`, and whatever a client claims in its attributes.
 */

const ALICE = "tok-alice-0d9f21";
const ALICE_LAPTOP = "tok-alice-laptop-77ab";
const BOB = "tok-bob-c3e810";
const OPERATOR = "tok-operator-41aa";

let gw: SecureGateway;
const clients: Array<{ close(): unknown }> = [];

beforeAll(async () => {
  const tokens = TokenRegistry.parse(
    JSON.stringify([
      { id: "alice", token: ALICE, tenant: "tenant-a" },
      { id: "alice-laptop", sha256: createHash("sha256").update(ALICE_LAPTOP).digest("hex"), tenant: "tenant-a" },
      { id: "bob", token: BOB, tenant: "tenant-b" },
      { id: "operator", token: OPERATOR, tenant: "operations", operator: true },
    ]),
    "tokens.json",
  );
  gw = await startSecureGateway({ tokens, upstreamToken: "upstream-7c1d" });
});

afterAll(async () => {
  for (const c of clients) await c.close();
  await gw?.stop();
});

async function ask(token: string): Promise<AskTestClient> {
  const client = await AskTestClient.websocket(gw.wsUrl("/rpc"), { headers: { authorization: `Bearer ${token}` } });
  clients.push({ close: () => client.socket.terminate() });
  await client.request("initialize", { client: { name: "tenant-tests", version: "1" } });
  return client;
}

async function tau(token: string): Promise<TauTestClient> {
  const client = await TauTestClient.connect(`${gw.wsUrl("/tau")}?access_token=${token}`);
  clients.push(client);
  await client.call("initialize", { client: { name: "tenant-tests", version: "1" } });
  return client;
}

/** A client of the host itself, past the gateway (what an operator with the upstream token sees). */
async function direct(): Promise<TauTestClient> {
  const client = await TauTestClient.connect(`${gw.stack.url}/?tau_token=upstream-7c1d`);
  clients.push(client);
  return client;
}

/** The error as a plain record, so that two of them compare with toEqual. */
const rpcErrorFields = (promise: Promise<unknown>) => rpcError(promise).then(({ code, message, data }) => ({ code, message, data }));

const create = (client: TauTestClient, attributes: Record<string, string> = {}) =>
  client.call<{ sessionId: string }>("session.create", { executionEnvironment: { kind: "local", cwd: gw.cwd }, attributes }).then((r) => r.sessionId);

const listed = async (client: TauTestClient) => (await client.call<{ sessions: Array<{ sessionId: string }> }>("session.list", {})).sessions.map((s) => s.sessionId);

describe("tenants", () => {
  let askA: AskTestClient;
  let askB: AskTestClient;
  let tauA: TauTestClient;
  let tauB: TauTestClient;
  /** Created over Ask by tenant A, over Tau by tenant A, over Ask by tenant B, on the host directly. */
  let askSessionA: string;
  let tauSessionA: string;
  let askSessionB: string;
  let hostSession: string;

  beforeAll(async () => {
    askA = await ask(ALICE);
    askB = await ask(BOB);
    tauA = await tau(ALICE);
    tauB = await tau(BOB);
    askSessionA = (await askA.request("session/create", {})).session.sessionId;
    askSessionB = (await askB.request("session/create", {})).session.sessionId;
    tauSessionA = await create(tauA);
    const host = await direct();
    await host.call("initialize", { client: { name: "operator", version: "1" } });
    hostSession = await create(host);
  });

  it("tags sessions with their tenant, whichever dialect created them", async () => {
    const host = await direct();
    for (const [sessionId, tenant] of [
      [askSessionA, "tenant-a"],
      [tauSessionA, "tenant-a"],
      [askSessionB, "tenant-b"],
    ] as const) {
      expect((await host.snapshot(sessionId)).attributes["tau-gateway.tenant"]).toBe(tenant);
    }
  });

  it("Ask session/list shows only the tenant's sessions, whichever token of the tenant asks", async () => {
    const ids = async (client: AskTestClient) => ((await client.request("session/list", { limit: 100 })).sessions as Array<{ sessionId: string }>).map((s) => s.sessionId);
    expect((await ids(askA)).sort()).toEqual([askSessionA, tauSessionA].sort());
    expect(await ids(askB)).toEqual([askSessionB]);
    const laptop = await ask(ALICE_LAPTOP);
    expect((await ids(laptop)).sort()).toEqual([askSessionA, tauSessionA].sort());
  });

  it("Ask: another tenant's session fails with -32004 exactly like an unknown one (subscribe, send, resume, close)", async () => {
    const unknown = "7a2b0c3d-0000-4000-8000-000000000000";
    const expected = async (method: string, params: (sessionId: string) => object) => {
      const missing = await rpcErrorFields(askB.request(method, params(unknown)));
      expect(missing.code).toBe(-32004);
      for (const foreign of [askSessionA, tauSessionA, hostSession]) {
        const refused = await rpcErrorFields(askB.request(method, params(foreign)));
        expect({ ...refused, message: refused.message.replace(foreign, unknown), data: JSON.parse(JSON.stringify(refused.data).replace(foreign, unknown)) }).toEqual(missing);
      }
    };
    await expected("session/subscribe", (sessionId) => ({ sessionId }));
    await expected("session/send", (sessionId) => ({ sessionId, content: "let me in" }));
    await expected("session/resume", (sessionId) => ({ sessionId }));
    await expected("session/close", (sessionId) => ({ sessionId }));
    // Nothing tenant B sent reached tenant A's sessions.
    const host = await direct();
    expect(Object.keys((await host.snapshot(askSessionA)).turns)).toEqual([]);
    expect(Object.keys((await host.snapshot(tauSessionA)).turns)).toEqual([]);
  });

  it("Tau session.list shows only the tenant's sessions, including those created over Ask", async () => {
    expect((await listed(tauA)).sort()).toEqual([askSessionA, tauSessionA].sort());
    expect(await listed(tauB)).toEqual([askSessionB]);
    // Again, now that every owner is known (filtered as the answer arrives, without lookups).
    expect((await listed(tauA)).sort()).toEqual([askSessionA, tauSessionA].sort());
    expect(await listed(tauB)).toEqual([askSessionB]);
    // The host itself has them all.
    const everything = await listed(await direct());
    for (const id of [askSessionA, tauSessionA, askSessionB, hostSession]) expect(everything).toContain(id);
  });

  it("Tau: another tenant's session answers not_found with data.sessionId, exactly like an unknown one, and nothing is forwarded", async () => {
    const unknown = "3c9e41aa-0000-4000-8000-000000000000";
    const missing = await tauB.fail("session.observe", { sessionId: unknown });
    expect(missing).toEqual({ code: "not_found", message: "session not found", data: { sessionId: unknown } });
    for (const foreign of [askSessionA, tauSessionA, hostSession]) {
      const like = (method: string) => ({ ...missing, data: { sessionId: foreign } });
      expect(await tauB.fail("session.observe", { sessionId: foreign })).toEqual(like("session.observe"));
      expect(await tauB.fail("session.snapshot", { sessionId: foreign })).toEqual(like("session.snapshot"));
      expect(await tauB.fail("session.submit", { sessionId: foreign, text: "let me in", historyEntryId: "intruder" })).toEqual(like("session.submit"));
      expect(await tauB.fail("session.exec", { sessionId: foreign, execId: "x1", command: "true" })).toEqual(like("session.exec"));
    }
    // The submit never reached the host: no turn "intruder" anywhere.
    const host = await direct();
    for (const foreign of [askSessionA, tauSessionA, hostSession]) expect((await host.snapshot(foreign)).turns["intruder"]).toBeUndefined();
    // Tenant A still works with its own sessions, over Tau too.
    const observed = await tauA.call<{ snapshot: { sessionId: string } }>("session.observe", { sessionId: askSessionA });
    expect(observed.snapshot.sessionId).toBe(askSessionA);
    expect(await tauA.call("session.submit", { sessionId: tauSessionA, text: "mine", historyEntryId: "owner-turn" })).toMatchObject({ userHistoryEntryId: "owner-turn" });
    tauB.assertAllValid();
    expect(tauB.messages.some((m) => typeof m.sessionId === "string" && m.sessionId !== askSessionB)).toBe(false);
  });

  it("a client cannot claim a tenant: a session.create naming the tenant attribute is refused and creates nothing", async () => {
    const host = await direct();
    const before = await listed(host);
    const refused = await tauB.fail("session.create", { executionEnvironment: { kind: "local", cwd: gw.cwd }, attributes: { "tau-gateway.tenant": "tenant-a" } });
    expect(refused.code).toBe("invalid_params");
    expect(refused.message).toContain("tau-gateway.tenant");
    expect((await listed(host)).sort()).toEqual(before.sort());
    expect((await listed(tauA)).sort()).toEqual([askSessionA, tauSessionA].sort());

    // Other attributes are the client's own and kept; the tenant is added by the gateway.
    const own = await create(tauB, { source: "tenant-tests", repository: "example/repo" });
    expect((await host.snapshot(own)).attributes).toEqual({ source: "tenant-tests", repository: "example/repo", "tau-gateway.tenant": "tenant-b" });
    expect((await listed(tauB)).sort()).toEqual([askSessionB, own].sort());
    expect(await tauA.fail("session.observe", { sessionId: own })).toMatchObject({ code: "not_found", data: { sessionId: own } });
  });

  it("Tau deltas of the tenant's own new session reach it", async () => {
    const sessionId = await create(tauB);
    await tauB.call("session.observe", { sessionId });
    const since = tauB.mark();
    await tauB.call("session.submit", { sessionId, text: "hello", historyEntryId: "b1" });
    await tauB.waitForTurnRunning(sessionId, "b1", since);
  });

  // Last: its extra session (closed through Ask) stays in Tau's own list.
  it("Ask ping counts only the tenant's own open sessions: another tenant's come and go unseen", async () => {
    const sessionsOf = async (client: AskTestClient) => (await client.request("ping")).sessions as number;
    expect(await sessionsOf(askB)).toBe(1);
    const before = await sessionsOf(askA);
    const extra = (await askA.request("session/create", {})).session.sessionId;
    expect(await sessionsOf(askA)).toBe(before + 1);
    expect(await sessionsOf(askB)).toBe(1);
    await askA.request("session/close", { sessionId: extra });
    expect(await sessionsOf(askA)).toBe(before);
    expect(await sessionsOf(askB)).toBe(1);
  });

  it("/metrics, which sums every tenant's traffic, answers an operator's token and refuses a tenant's", async () => {
    const scrape = (token: string) => fetch(`${gw.baseUrl}/metrics`, { headers: { authorization: `Bearer ${token}` } });
    for (const token of [ALICE, BOB]) {
      const refused = await scrape(token);
      expect(refused.status).toBe(403);
      expect(await refused.json()).toEqual({ error: "forbidden", message: expect.stringContaining('"operator": true') });
    }
    const operator = await scrape(OPERATOR);
    expect(operator.status).toBe(200);
    expect(await operator.text()).toContain("tau_gateway_requests_total");
  });
});
