import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { ResourceListChangedNotificationSchema } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { THREAD_SOURCE_KINDS } from "../../../src/registry/codex/types.js";
import { RawAcpClient } from "../../support/acp-raw-client.js";
import { AskTestClient } from "../../support/ask-client.js";
import { openSession, waitForTerminal } from "../../support/ask-events.js";
import { CodexTestClient } from "../../support/codex-client.js";
import { httpTransport, sdkClient } from "../../support/mcp-client.js";
import { twoTenantRegistry } from "../../support/two-tenants.js";
import { startSecureGateway, type SecureGateway } from "../../support/secure-gateway.js";
import { TauTestClient } from "../../support/tau-client.js";

/**
 * Every field a tenant can read, on one real gateway with two tenants (the list is in
 * docs/operations.md, "What a tenant can read"): tenant A creates sessions in every dialect and
 * keeps a turn running, and nothing tenant B reads — counts, lists, loaded threads, resources,
 * notifications — names or counts one of them. Each test is one field.
 */

const ALICE = "tok-alice-visibility-1";
const BOB = "tok-bob-visibility-2";
const OPERATOR = "tok-operator-visibility-3";
const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

let gw: SecureGateway;
const closers: Array<() => unknown> = [];

/** Tenant B's clients, connected before tenant A does anything, so they would hear of it. */
let askB: Awaited<ReturnType<typeof AskTestClient.websocket>>;
let codexB: CodexTestClient & { socket: { terminate(): void } };
let acpB: RawAcpClient;
let mcpB: Client;
let mcpListChangesB = 0;
let tauB: TauTestClient;
let bobSession: string;
/** Tenant A's sessions: Ask (a turn left running), Codex, ACP, MCP, Tau. */
const aliceSessions: string[] = [];

beforeAll(async () => {
  const tokens = twoTenantRegistry({ alice: ALICE, bob: BOB, operator: OPERATOR });
  gw = await startSecureGateway({ tokens });

  askB = await AskTestClient.websocket(gw.wsUrl("/rpc"), { headers: bearer(BOB) });
  closers.push(() => askB.socket.terminate());
  bobSession = await openSession(askB);
  codexB = await codexClient(BOB);
  acpB = await acpClient(BOB);
  mcpB = sdkClient();
  mcpB.setNotificationHandler(ResourceListChangedNotificationSchema, () => void mcpListChangesB++);
  await mcpB.connect(httpTransport(`${gw.baseUrl}/mcp`, { requestInit: { headers: bearer(BOB) } }));
  closers.push(() => mcpB.close());
  tauB = await tauClient(BOB);

  // Tenant A, in every dialect.
  const askA = await AskTestClient.websocket(gw.wsUrl("/rpc"), { headers: bearer(ALICE) });
  closers.push(() => askA.socket.terminate());
  const running = await openSession(askA);
  aliceSessions.push(running);
  const codexA = await codexClient(ALICE);
  const { thread } = await codexA.request("thread/start", { cwd: gw.cwd });
  aliceSessions.push(thread.id);
  await codexA.turn(thread.id, "hello from tenant A");
  const acpA = await acpClient(ALICE);
  aliceSessions.push((await acpA.request("session/new", { cwd: gw.cwd, mcpServers: [] })).result.sessionId);
  const mcpA = sdkClient();
  await mcpA.connect(httpTransport(`${gw.baseUrl}/mcp`, { requestInit: { headers: bearer(ALICE) } }));
  closers.push(() => mcpA.close());
  const started = await mcpA.callTool({ name: "tau", arguments: { prompt: "from tenant A over MCP", cwd: gw.cwd } });
  aliceSessions.push((started.structuredContent as { sessionId: string }).sessionId);
  const tauA = await tauClient(ALICE);
  aliceSessions.push((await tauA.call<{ sessionId: string }>("session.create", { executionEnvironment: { kind: "local", cwd: gw.cwd }, attributes: {} })).sessionId);
  // A's Ask turn runs while B reads.
  const sent = await askA.request("session/send", { sessionId: running, content: "/sleep 60000" });
  await askA.waitFor(() => askA.eventsOf(running).some((e) => e.type === "turn.started"), "tenant A's turn to start");
  closers.unshift(async () => {
    await askA.request("session/abort", { sessionId: running });
    await waitForTerminal(askA, running, sent.turnId);
  });
}, 60_000);

afterAll(async () => {
  for (const close of closers) await Promise.resolve(close()).catch(() => undefined);
  await gw?.stop();
});

async function codexClient(token: string) {
  const client = await CodexTestClient.websocket(gw.wsUrl("/"), bearer(token));
  closers.push(() => client.socket.terminate());
  await client.initialize();
  return client;
}

async function acpClient(token: string) {
  const client = await RawAcpClient.connect(gw.wsUrl("/acp"), bearer(token));
  closers.push(() => client.close());
  await client.initialize();
  return client;
}

async function tauClient(token: string) {
  const client = await TauTestClient.connect(`${gw.wsUrl("/tau")}?access_token=${token}`);
  closers.push(() => client.close());
  await client.call("initialize", { client: { name: "tenant-visibility", version: "1" } });
  return client;
}

/** Whether any of tenant A's session ids appears anywhere in `value`. */
const namesAlice = (value: unknown) => aliceSessions.filter((id) => JSON.stringify(value).includes(id));

describe("what a tenant can read, with another tenant's sessions on the gateway", () => {
  it("has the other tenant's sessions to hide: one in each dialect, one of them running", () => {
    expect(new Set(aliceSessions).size).toBe(5);
  });

  it("Ask ping: sessions counts only the tenant's own", async () => {
    expect((await askB.request("ping")).sessions).toBe(1);
  });

  it("Ask session/list: only the tenant's sessions", async () => {
    const listed = await askB.request("session/list", { limit: 100 });
    expect(listed.sessions.map((s: { sessionId: string }) => s.sessionId)).toEqual([bobSession]);
    expect(namesAlice(listed)).toEqual([]);
  });

  it("Codex thread/list: only the tenant's threads, for every source kind", async () => {
    const listed = await codexB.request("thread/list", { limit: 100 });
    expect(listed.data.map((t: { id: string }) => t.id)).toEqual([bobSession]);
    const everySource = await codexB.request("thread/list", { limit: 100, sourceKinds: [...THREAD_SOURCE_KINDS] });
    expect(namesAlice(everySource)).toEqual([]);
  });

  it("Codex thread/loaded/list: only the threads this connection loaded", async () => {
    expect(await codexB.request("thread/loaded/list", {})).toEqual({ data: [], nextCursor: null });
  });

  it("ACP session/list: only the tenant's sessions", async () => {
    const listed = (await acpB.request("session/list", {})).result;
    expect(listed.sessions.map((s: { sessionId: string }) => s.sessionId)).toEqual([bobSession]);
    expect(namesAlice(listed)).toEqual([]);
  });

  it("MCP tau-sessions tool and resources/list: only the tenant's sessions", async () => {
    const listed = (await mcpB.callTool({ name: "tau-sessions", arguments: {} })).structuredContent as { sessions: Array<{ sessionId: string }> };
    expect(listed.sessions.map((s) => s.sessionId)).toEqual([bobSession]);
    const resources = await mcpB.listResources();
    expect(resources.resources.map((r) => r.uri)).toEqual([`tau://session/${bobSession}`]);
  });

  it("MCP resources/read of another tenant's session: not found, as an unknown one", async () => {
    const unknown = await mcpB.readResource({ uri: "tau://session/no-such-session" }).catch((err: Error) => err.message);
    for (const id of aliceSessions) {
      const refused = await mcpB.readResource({ uri: `tau://session/${id}` }).catch((err: Error) => err.message);
      expect(refused).toBe((unknown as string).replace("no-such-session", id));
    }
  });

  it("Tau session.list: only the tenant's sessions", async () => {
    const listed = await tauB.call<{ sessions: Array<{ sessionId: string }> }>("session.list", {});
    expect(listed.sessions.map((s) => s.sessionId)).toEqual([bobSession]);
  });

  it("/metrics: refused to a tenant's token (its labels sum every tenant), answered to an operator's", async () => {
    expect((await fetch(`${gw.baseUrl}/metrics`, { headers: bearer(BOB) })).status).toBe(403);
    const metrics = await fetch(`${gw.baseUrl}/metrics`, { headers: bearer(OPERATOR) });
    expect(metrics.status).toBe(200);
    // No label carries a session id, whoever may scrape it.
    expect(namesAlice(await metrics.text())).toEqual([]);
  });

  it("/healthz and /readyz (no token needed): no session, no count", async () => {
    for (const path of ["/healthz", "/readyz"]) {
      const body = await (await fetch(`${gw.baseUrl}${path}`)).text();
      expect(namesAlice(body)).toEqual([]);
      expect(body).not.toMatch(/session/i);
    }
  });

  it("nothing the tenant's connections were sent names the other tenant's sessions, and MCP heard of no change", async () => {
    // A last round trip on each, so that anything sent before it has arrived.
    await askB.request("ping");
    await codexB.request("thread/loaded/list", {});
    await acpB.request("session/list", {});
    await mcpB.listTools();
    await tauB.call("session.list", {});
    expect(namesAlice(askB.received)).toEqual([]);
    expect(namesAlice(codexB.received)).toEqual([]);
    expect(namesAlice(acpB.received)).toEqual([]);
    expect(namesAlice(tauB.messages)).toEqual([]);
    expect(mcpListChangesB).toBe(0);
  });
});
