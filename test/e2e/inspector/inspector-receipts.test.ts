import { describe, expect, it } from "vitest";
import { parseApprovalPolicy } from "../../../src/bridge/interactions/index.js";
import { TokenRegistry } from "../../../src/gateway/auth/tokens.js";
import { AskTestClient } from "../../support/ask-client.js";
import { openSession, waitForTerminal } from "../../support/ask-events.js";
import { cleanupsAfterEach } from "../../support/cleanups.js";
import { deferred, ECHO_TOOL } from "../../support/echo-tool.js";
import { watchInspectorFeed } from "../../support/inspector-feed-watch.js";
import { startInspectorGateway } from "../../support/inspector-gateway.js";

/**
 * The approvals panel's data, over real sockets: the feed tells every viewer of a session each step
 * of its receipts as it is added (proposed, asked, the vote, decided, executed, returned), and
 * `/inspector/api/sessions/:id/receipts` answers the receipts themselves to whom
 * `GET /sessions/:id/receipts` answers: an operator and the session's owner; another principal of
 * its tenant is refused (403), another tenant gets the 404 of an unknown session and no step on
 * its feed.
 */

const cleanups = cleanupsAfterEach();
const TOKENS = { ops: "ops-receipts-secret", alice: "alice-receipts-secret", carol: "carol-receipts-secret", bob: "bob-receipts-secret" };
const tokens = () =>
  TokenRegistry.parse(
    JSON.stringify([
      { id: "ops", token: TOKENS.ops, tenant: "ops", operator: true },
      { id: "alice", token: TOKENS.alice, tenant: "a" },
      { id: "carol", token: TOKENS.carol, tenant: "a" },
      { id: "bob", token: TOKENS.bob, tenant: "b" },
    ]),
    "tokens.json",
  );
const POLICY = parseApprovalPolicy(
  `version: 3
rules:
  - name: alice-decides
    match: { tool: echo-json }
    action: require
    approvers: { principals: [alice] }
`,
  "policy.yaml",
);
const bearer = (token: string) => ({ authorization: `Bearer ${token}` });
const STEPS = ["proposed", "asked", "vote", "decided", "executed", "returned"];

describe("the inspector's receipts", () => {
  it("tells each step on the feed as it comes, and shows the receipts to an operator and the owner only", async () => {
    const gw = await cleanups.stopAfterTest(startInspectorGateway({ tokens: tokens(), commandTools: [ECHO_TOOL], approvalPolicy: POLICY }));
    const feeds = {
      ops: await watchInspectorFeed(`${gw.baseUrl}/inspector/feed`, cleanups, TOKENS.ops),
      alice: await watchInspectorFeed(`${gw.baseUrl}/inspector/feed`, cleanups, TOKENS.alice),
      bob: await watchInspectorFeed(`${gw.baseUrl}/inspector/feed`, cleanups, TOKENS.bob),
    };
    const read = async (sessionId: string, token: string) => {
      const response = await fetch(`${gw.baseUrl}/inspector/api/sessions/${sessionId}/receipts`, { headers: bearer(token) });
      return { status: response.status, body: await response.json() };
    };

    // Alice creates the session (its owner) and will approve the call, once the test lets her.
    const alice = await AskTestClient.websocket(gw.wsUrl("/rpc"), { headers: bearer(TOKENS.alice) });
    cleanups.push(() => alice.socket.close());
    const answer = deferred<{ decision: string }>();
    alice.reverse = () => answer.promise;
    const sessionId = await openSession(alice, { capabilities: ["reverseRequests"] });
    const { turnId } = await alice.request("session/send", { sessionId, content: '/tool echo-json {"a":5}\nDone' });
    const stepsOn = (feed: typeof feeds.ops) => feed.receipts.filter((r) => r.sessionId === sessionId).map((r) => r.step);

    // Waiting for alice: the steps so far are on the feed, and the receipt under way reads them.
    await feeds.alice.until(() => stepsOn(feeds.alice).includes("asked"), "the asked step on alice's feed");
    expect(stepsOn(feeds.alice)).toEqual(["proposed", "asked"]);
    const underWay = await read(sessionId, TOKENS.alice);
    expect(underWay.status).toBe(200);
    expect(underWay.body.receipts).toHaveLength(1);
    expect(underWay.body.receipts[0]).toMatchObject({ sessionId, tool: "echo-json", policyVersion: "3", rule: { name: "alice-decides", index: 0 }, interactionId: "act_1" });
    expect(underWay.body.receipts[0].steps.map((s: { step: string }) => s.step)).toEqual(["proposed", "asked"]);

    answer.resolve({ decision: "allow_once" });
    expect((await waitForTerminal(alice, sessionId, turnId)).type).toBe("turn.completed");
    for (const feed of [feeds.alice, feeds.ops]) {
      await feed.until(() => stepsOn(feed).includes("returned"), "the returned step");
      expect(stepsOn(feed)).toEqual(STEPS);
    }

    // The owner and an operator read the whole receipt: the vote and the decision by alice, the digest that ran, the result.
    for (const token of [TOKENS.alice, TOKENS.ops]) {
      const { status, body } = await read(sessionId, token);
      expect(status).toBe(200);
      const [receipt] = body.receipts;
      expect(receipt.steps.map((s: { step: string }) => s.step)).toEqual(STEPS);
      expect(receipt.steps[2]).toMatchObject({ step: "vote", approver: "alice", approve: true });
      expect(receipt.steps[3]).toMatchObject({ step: "decided", by: "client", outcome: "approved", approvers: ["alice"] });
      expect(receipt.steps[4]).toEqual({ step: "executed", at: expect.any(String), digest: receipt.digest });
      expect(receipt.steps[5]).toMatchObject({ step: "returned", ok: true });
    }
    // Another principal of the tenant does not own the session; another tenant does not know of it.
    const carol = await read(sessionId, TOKENS.carol);
    expect(carol).toEqual({ status: 403, body: { error: "forbidden", message: `principal 'carol' does not own session ${sessionId}: its receipts are read by its owner or an operator token` } });
    const bob = await read(sessionId, TOKENS.bob);
    const unknown = await read("ses_unknown", TOKENS.bob);
    expect(bob.status).toBe(404);
    expect(unknown.status).toBe(404);
    expect(bob.body.error).toBe(unknown.body.error);

    // Bob's feed: his own connection's traffic comes after alice's steps in the feed's one order, and none of hers came before it.
    const bobClient = await AskTestClient.websocket(gw.wsUrl("/rpc"), { headers: bearer(TOKENS.bob) });
    cleanups.push(() => bobClient.socket.close());
    await openSession(bobClient);
    await feeds.bob.until(() => feeds.bob.frames.some((f) => f.method === "session/create"), "bob's own frames");
    expect(feeds.bob.receipts).toEqual([]);
  });
});
