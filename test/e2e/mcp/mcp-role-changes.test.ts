import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { TokenRegistry } from "../../../src/gateway/auth/tokens.js";
import { AskTestClient } from "../../support/ask-client.js";
import { eventually, waitForTerminal } from "../../support/ask-events.js";
import { cleanupsAfterEach } from "../../support/cleanups.js";
import type { ServingCli } from "../../support/cli.js";
import { CALL_ECHO, ECHO_TOOL } from "../../support/echo-tool.js";
import { relistingClient, toolListChanges, webSocketTransport, type RecordingTransport } from "../../support/mcp-client.js";
import { startReplicaSet } from "../../support/replica-set.js";
import { startSecureGateway } from "../../support/secure-gateway.js";
import { writeTokensFile } from "../../support/tokens-file.js";

/**
 * A role granted or revoked in a session changes the tools of the MCP connections watching it:
 * bob's connection watches alice's session while it waits for an approval (tau-answer is one of
 * its tools, bob being a controller); alice making bob an observer tells it
 * notifications/tools/list_changed and its tools lose tau-answer; granting controller back tells it
 * again and brings tau-answer back; a grant that changes nothing of its tools tells it nothing. On
 * one gateway, and on two replicas sharing Redis with the grants made through the other replica.
 */

const cleanups = cleanupsAfterEach();
const TOKENS = { alice: "tok-alice-role-changes-1", bob: "tok-bob-role-changes-2", carol: "tok-carol-role-changes-3" };
type Who = keyof typeof TOKENS;
/** The operator's token reads the replicas' /metrics (which replica owns the host). */
const OPS = "tok-ops-role-changes-4";
const ENTRIES = [...(Object.keys(TOKENS) as Who[]).map((id) => ({ id, token: TOKENS[id], tenant: "team" })), { id: "ops", token: OPS, tenant: "operations", operator: true }];

const ALWAYS = ["tau", "tau-reply", "tau-sessions", "tau-history", "tau-interrupt"];
const ANSWERING = [...ALWAYS, "tau-answer"];

/** Bob's SDK client on `wsBase`'s /mcp/ws, listing its tools again each time it is told they changed (no forms: the approval waits for alice). */
async function bobWatching(wsBase: string, sessionId: string) {
  const transport: RecordingTransport = webSocketTransport(`${wsBase}/mcp/ws?access_token=${TOKENS.bob}`);
  const { client, relisted } = relistingClient("role-changes-bob");
  await client.connect(transport);
  cleanups.push(() => client.close().catch(() => undefined));
  await client.subscribeResource({ uri: `tau://session/${sessionId}` });
  const toolsNow = async () => (await client.listTools()).tools.map((tool) => tool.name);
  const told = () => toolListChanges(transport);
  return { relisted, toolsNow, told, transport };
}

const askClient = (wsBase: string, who: Who) => AskTestClient.signedIn(`${wsBase}/rpc`, TOKENS[who], { name: `role-changes-${who}`, cleanups });

/** Alice's session (she owns it), and a turn of hers whose echo-json call waits for approval. */
async function aliceWaiting(alice: AskTestClient) {
  const { session } = await alice.request("session/create", {});
  const sessionId = session.sessionId as string;
  await alice.request("session/subscribe", { sessionId });
  return { sessionId, send: async () => (await alice.request("session/send", { sessionId, content: CALL_ECHO })).turnId as string };
}

/** A role set as the HTTP admin route sets it. */
async function putRole(baseUrl: string, sessionId: string, principal: string, role: string) {
  const response = await fetch(`${baseUrl}/sessions/${encodeURIComponent(sessionId)}/roles/${principal}`, {
    method: "PUT",
    headers: { authorization: `Bearer ${TOKENS.alice}`, "content-type": "application/json" },
    body: JSON.stringify({ role }),
  });
  expect(response.status).toBe(200);
}

/**
 * The steps both tests take once bob watches alice's waiting session: each role change through
 * `changes` (alice's, on whichever gateway) and what bob's connection is told.
 */
async function revokeAndGrantBack(alice: AskTestClient, sessionId: string, turnId: string, bob: Awaited<ReturnType<typeof bobWatching>>, changes: { baseUrl: string; via: AskTestClient }) {
  await eventually(() => bob.relisted.length === 1, "bob to be offered tau-answer");
  expect(bob.relisted[0]).toEqual(ANSWERING);

  await changes.via.request("session/setRole", { sessionId, principal: "bob", role: "observer" });
  await eventually(() => bob.relisted.length === 2, "bob to be told its tools changed once made an observer");
  expect(bob.relisted[1]).toEqual(ALWAYS);
  expect(await bob.toolsNow()).toEqual(ALWAYS);

  await putRole(changes.baseUrl, sessionId, "bob", "controller");
  await eventually(() => bob.relisted.length === 3, "bob to be told its tools changed once a controller again");
  expect(bob.relisted[2]).toEqual(ANSWERING);

  // Grants that change nothing of bob's tools (carol's role, bob's own set again) tell it nothing:
  // the next thing it is told is the approval decided, and tau-answer gone with it.
  await changes.via.request("session/setRole", { sessionId, principal: "carol", role: "observer" });
  await changes.via.request("session/setRole", { sessionId, principal: "bob", role: "controller" });
  await alice.request("interaction/approve", { sessionId, interactionId: "act_1" });
  expect((await waitForTerminal(alice, sessionId, turnId)).type).toBe("turn.completed");
  await eventually(() => bob.relisted.length === 4, "bob to be told the approval was decided");
  expect(bob.relisted[3]).toEqual(ALWAYS);
  expect(bob.told()).toBe(4);
  expect(bob.transport.problems()).toEqual([]);
}

describe("roles granted and revoked change a watching MCP connection's tools", () => {
  it("on one gateway: made an observer, bob loses tau-answer and is told; made a controller again, it is back and bob is told", async () => {
    const tokens = TokenRegistry.parse(JSON.stringify(ENTRIES), "tokens.json");
    const gw = await cleanups.stopAfterTest(startSecureGateway({ tokens, commandTools: [ECHO_TOOL] }));
    const wsBase = gw.wsUrl("");
    const alice = await askClient(wsBase, "alice");
    const { sessionId, send } = await aliceWaiting(alice);
    const bob = await bobWatching(wsBase, sessionId);
    expect(await bob.toolsNow()).toEqual(ALWAYS);
    const turnId = await send();
    await revokeAndGrantBack(alice, sessionId, turnId, bob, { baseUrl: gw.baseUrl, via: alice });
  });

  it("on two replicas sharing Redis: the grants made through replica A reach bob's connection on replica B", { timeout: 240_000 }, async () => {
    const dir = mkdtempSync(join(tmpdir(), "tau-gateway-mcp-role-changes-"));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    const tools = join(dir, "tools.json");
    writeFileSync(tools, JSON.stringify({ tools: [ECHO_TOOL] }));
    const set = await startReplicaSet(cleanups, { replicas: 2, serveArgs: ["--tokens-file", writeTokensFile(dir, ENTRIES), "--tools-config", tools], metricsToken: OPS });
    const [a, b] = set.replicas as [ServingCli, ServingCli];
    const wsOf = (replica: ServingCli) => replica.baseUrl.replace("http://", "ws://");
    const alice = await askClient(wsOf(a), "alice");
    const { sessionId, send } = await aliceWaiting(alice);
    const bob = await bobWatching(wsOf(b), sessionId);
    const turnId = await send();
    await revokeAndGrantBack(alice, sessionId, turnId, bob, { baseUrl: a.baseUrl, via: alice });
  });
});
