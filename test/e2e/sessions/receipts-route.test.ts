import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AskTestClient } from "../../support/ask-client.js";
import { openSession } from "../../support/ask-events.js";
import { startSecureGateway, type SecureGateway } from "../../support/secure-gateway.js";
import { twoTenantRegistry } from "../../support/two-tenants.js";

/** GET /sessions/:id/receipts answers an operator and the session's own tenant; another tenant gets the 404 of an unknown session. */

const ALICE = "tok-alice-receipts-1";
const BOB = "tok-bob-receipts-2";
const OPERATOR = "tok-operator-receipts-3";
const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

let gw: SecureGateway;
let ask: Awaited<ReturnType<typeof AskTestClient.websocket>>;
let sessionId: string;
beforeAll(async () => {
  gw = await startSecureGateway({ tokens: twoTenantRegistry({ alice: ALICE, bob: BOB, operator: OPERATOR }) });
  ask = await AskTestClient.websocket(gw.wsUrl("/rpc"), { headers: bearer(ALICE) });
  sessionId = await openSession(ask);
});
afterAll(async () => {
  ask?.socket.terminate();
  await gw?.stop();
});

const read = (id: string, headers: Record<string, string> = {}) => fetch(`${gw.baseUrl}/sessions/${id}/receipts`, { headers });

describe("GET /sessions/:id/receipts", () => {
  it("answers the session's tenant and an operator", async () => {
    for (const token of [ALICE, OPERATOR]) {
      const response = await read(sessionId, bearer(token));
      expect(response.status).toBe(200);
      expect(await response.json()).toEqual({ sessionId, receipts: [] });
    }
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
