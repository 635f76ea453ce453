import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CodexTestClient, rpcError } from "../../support/codex-client.js";
import { parsePrometheus, sampleValue } from "../../support/prometheus.js";
import { twoTenantRegistry } from "../../support/two-tenants.js";
import { startSecureGateway, tryUpgrade, type SecureGateway } from "../../support/secure-gateway.js";

/**
 * WebSocket `/` behind the gateway's front door, like every route: bearer tokens in
 * `Authorization` (as `codex --remote-auth-token-env` sends them), tenants, the Origin allowlist,
 * metrics under dialect codex, and drain.
 */

const ALICE = "tok-alice-5e1b";
const BOB = "tok-bob-92cd";
/** An operator's token: with several tenants, /metrics answers only such tokens. */
const OPERATOR = "tok-operator-5e1f";

let gw: SecureGateway;
const clients: CodexTestClient[] = [];

beforeAll(async () => {
  const tokens = twoTenantRegistry({ alice: ALICE, bob: BOB, operator: OPERATOR });
  gw = await startSecureGateway({ tokens, allowedOrigins: ["https://app.example"] });
});

afterAll(async () => {
  for (const c of clients) (c as CodexTestClient & { socket: { terminate(): void } }).socket.terminate();
  await gw?.stop();
});

async function codex(token: string): Promise<CodexTestClient> {
  const client = await CodexTestClient.websocket(gw.wsUrl("/"), { authorization: `Bearer ${token}` });
  clients.push(client);
  await client.initialize();
  return client;
}

describe("WebSocket / at the front door", () => {
  it("needs a bearer token and an allowed Origin, like every route", async () => {
    expect(await tryUpgrade(gw.wsUrl("/"))).toMatchObject({ opened: false, status: 401 });
    expect(await tryUpgrade(gw.wsUrl("/"), { authorization: "Bearer wrong" })).toMatchObject({ opened: false, status: 401 });
    expect(await tryUpgrade(gw.wsUrl("/"), { authorization: `Bearer ${ALICE}`, origin: "https://evil.example" })).toMatchObject({ opened: false, status: 403 });
    const allowed = await tryUpgrade(gw.wsUrl("/"), { authorization: `Bearer ${ALICE}`, origin: "https://app.example" });
    expect(allowed.opened).toBe(true);
    if (allowed.opened) allowed.socket.terminate();
  });

  it("answers another tenant's thread exactly as one that does not exist, and lists only the tenant's", async () => {
    const alice = await codex(ALICE);
    const { thread } = await alice.request("thread/start", { cwd: gw.cwd });
    const bob = await codex(BOB);
    const foreign = await rpcError(bob.request("thread/read", { threadId: thread.id }));
    const unknown = await rpcError(bob.request("thread/read", { threadId: "5b1c2b44-0000-4000-8000-000000000000" }));
    expect(foreign.code).toBe(unknown.code);
    expect(foreign.message.replace(thread.id, "ID")).toBe(unknown.message.replace("5b1c2b44-0000-4000-8000-000000000000", "ID"));
    expect(await rpcError(bob.request("turn/start", { threadId: thread.id, input: [{ type: "text", text: "hi" }] }))).toMatchObject({ code: -32600 });
    expect((await bob.request("thread/list", {})).data.map((t: { id: string }) => t.id)).not.toContain(thread.id);
    expect((await alice.request("thread/list", {})).data.map((t: { id: string }) => t.id)).toContain(thread.id);
    expect([...alice.invalid, ...bob.invalid]).toEqual([]);
  });

  it("counts the dialect's requests and connections in the metrics", async () => {
    const c = await codex(ALICE);
    await rpcError(c.request("turn/start", { threadId: 1 }));
    const response = await fetch(`${gw.baseUrl}/metrics`, { headers: { authorization: `Bearer ${OPERATOR}` } });
    const samples = parsePrometheus(await response.text());
    expect(sampleValue(samples, "tau_gateway_requests_total", { dialect: "codex", method: "initialize", outcome: "ok" })).toBeGreaterThanOrEqual(1);
    // The client's `initialized` is a notification: nothing is answered, nothing counted.
    expect(samples.filter((s) => s.name === "tau_gateway_requests_total" && s.labels.method === "initialized")).toEqual([]);
    expect(sampleValue(samples, "tau_gateway_requests_total", { dialect: "codex", method: "turn/start", outcome: "invalid_params" })).toBeGreaterThanOrEqual(1);
    expect(sampleValue(samples, "tau_gateway_validation_failures_total", { dialect: "codex", source: "client" })).toBeGreaterThanOrEqual(1);
    expect(sampleValue(samples, "tau_gateway_connections", { route: "/" })).toBeGreaterThanOrEqual(1);
  });

  it("refuses new requests with -32012 while draining", async () => {
    const c = await codex(ALICE);
    void gw.app.drain.drain();
    const refused = await rpcError(c.request("thread/loaded/list", {}));
    expect(refused.code).toBe(-32012);
    expect(refused.message).toContain("gateway shutting down");
    expect(c.invalid).toEqual([]);
  });
});
