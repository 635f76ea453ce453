import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AskTestClient } from "../../support/ask-client.js";
import { openSession } from "../../support/ask-events.js";
import { TokenRegistry } from "../../../src/gateway/auth/tokens.js";
import { startSecureGateway, type SecureGateway } from "../../support/secure-gateway.js";
import { twoTenantEntries } from "../../support/two-tenants.js";

/**
 * GET /sessions/:id/receipts answers an operator and the session's owner; another principal of its
 * tenant is refused (403); another tenant gets the 404 of an unknown session.
 */

const ALICE = "tok-alice-receipts-1";
const BOB = "tok-bob-receipts-2";
const OPERATOR = "tok-operator-receipts-3";
const CAROL = "tok-carol-receipts-4";
const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

let gw: SecureGateway;
let ask: Awaited<ReturnType<typeof AskTestClient.websocket>>;
let sessionId: string;
beforeAll(async () => {
  const entries = [...twoTenantEntries({ alice: ALICE, bob: BOB, operator: OPERATOR }), { id: "carol", token: CAROL, tenant: "tenant-a" }];
  gw = await startSecureGateway({ tokens: TokenRegistry.parse(JSON.stringify(entries), "tokens.json") });
  ask = await AskTestClient.websocket(gw.wsUrl("/rpc"), { headers: bearer(ALICE) });
  sessionId = await openSession(ask);
});
afterAll(async () => {
  ask?.socket.terminate();
  await gw?.stop();
});

const read = (id: string, headers: Record<string, string> = {}) => fetch(`${gw.baseUrl}/sessions/${id}/receipts`, { headers });

describe("GET /sessions/:id/receipts", () => {
  it("answers the session's owner and an operator", async () => {
    for (const token of [ALICE, OPERATOR]) {
      const response = await read(sessionId, bearer(token));
      expect(response.status).toBe(200);
      expect(await response.json()).toEqual({ sessionId, receipts: [] });
    }
  });

  it("refuses another principal of the session's tenant, until the owner grants it ownership", async () => {
    const refused = await read(sessionId, bearer(CAROL));
    expect(refused.status).toBe(403);
    expect(await refused.json()).toEqual({ error: "forbidden", message: `principal 'carol' does not own session ${sessionId}: its receipts are read by its owner or an operator token` });
    await ask.request("session/setRole", { sessionId, principal: "carol", role: "owner" });
    expect((await read(sessionId, bearer(CAROL))).status).toBe(200);
    await ask.request("session/setRole", { sessionId, principal: "carol", role: null });
    expect((await read(sessionId, bearer(CAROL))).status).toBe(403);
  });

  it("is a 404 for another tenant's session, as for an unknown one, and a 401 without a token", async () => {
    const other = await read(sessionId, bearer(BOB));
    const unknown = await read("ses_unknown", bearer(BOB));
    expect(other.status).toBe(404);
    expect(unknown.status).toBe(404);
    expect((await other.json()).error).toBe((await unknown.json()).error);
    expect((await read(sessionId)).status).toBe(401);
  });
});
