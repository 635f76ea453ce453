import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { AskTestClient, rpcError } from "../../support/ask-client.js";
import { CodexTestClient } from "../../support/codex-client.js";
import { CALL_ECHO, deferred, ECHO_TOOL } from "../../support/echo-tool.js";
import { waitForTerminal } from "../../support/ask-events.js";
import { cleanupsAfterEach } from "../../support/cleanups.js";
import type { ServingCli } from "../../support/cli.js";
import { startReplicaSet } from "../../support/replica-set.js";
import { writeTokensFile } from "../../support/tokens-file.js";

/**
 * Roles live in the store: two replicas on one redis-server, every part a real process. Alice
 * creates a session through replica A (its owner); bob, whose tokens-file default is observer, is
 * refused on replica B; alice's grant made on A lets bob prompt on B, and her revoke made on B over
 * HTTP refuses him on A again. An approval opened by A's host is asked on B only of the
 * principals that may decide it: carol (a controller) is asked there, bob (an observer) is not, in
 * Ask or Codex, and is told `mayDecide: false`.
 */

const cleanups = cleanupsAfterEach();
const TOKENS = { alice: "tok-alice-replicas-1", bob: "tok-bob-replicas-2", ops: "tok-ops-replicas-3", carol: "tok-carol-replicas-4" };
const FORBIDDEN = -32011;

function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), "tau-gateway-replica-roles-"));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

const tokensFile = (): string =>
  writeTokensFile(tempDir(), [
    { id: "alice", token: TOKENS.alice, tenant: "team" },
    { id: "bob", token: TOKENS.bob, tenant: "team", sessionRole: "observer" },
    { id: "ops", token: TOKENS.ops, tenant: "operations", operator: true },
    { id: "carol", token: TOKENS.carol, tenant: "team" },
  ]);

const client = (replica: ServingCli, who: keyof typeof TOKENS, capabilities?: string[]) =>
  AskTestClient.signedIn(`${replica.baseUrl.replace("http://", "ws://")}/rpc`, TOKENS[who], { name: `replica-roles-${who}`, capabilities, cleanups });

describe("roles on replicas sharing Redis", () => {
  it("a grant made on one replica lets the principal prompt on another, and a revoke made there refuses it on the first", { timeout: 240_000 }, async () => {
    const set = await startReplicaSet(cleanups, { replicas: 2, serveArgs: ["--tokens-file", tokensFile()], metricsToken: TOKENS.ops });
    const [a, b] = set.replicas as [ServingCli, ServingCli];
    const aliceOnA = await client(a, "alice");
    const bobOnA = await client(a, "bob");
    const bobOnB = await client(b, "bob");
    const { session } = await aliceOnA.request("session/create", {});
    const sessionId = session.sessionId as string;

    const refused = await rpcError(bobOnB.request("session/send", { sessionId, content: "as an observer" }));
    expect(refused.code).toBe(FORBIDDEN);
    expect(refused.message).toContain("observer");

    await aliceOnA.request("session/setRole", { sessionId, principal: "bob", role: "controller" });
    expect((await bobOnB.request("session/roles", { sessionId })).yourRole).toBe("controller");
    await bobOnB.request("session/subscribe", { sessionId });
    const { turnId } = await bobOnB.request("session/send", { sessionId, content: "granted on A, sent on B" });
    expect(await waitForTerminal(bobOnB, sessionId, turnId)).toMatchObject({ type: "turn.completed", payload: { response: "You said: granted on A, sent on B" } });

    const revoked = await fetch(`${b.baseUrl}/sessions/${encodeURIComponent(sessionId)}/roles/bob`, { method: "DELETE", headers: { authorization: `Bearer ${TOKENS.alice}` } });
    expect(revoked.status).toBe(200);
    const again = await rpcError(bobOnA.request("session/send", { sessionId, content: "revoked on B, sent on A" }));
    expect(again.code).toBe(FORBIDDEN);
  });

  it("asks an approval opened on A of a controller on B, and not of an observer there", { timeout: 240_000 }, async () => {
    const tools = join(tempDir(), "tools.json");
    writeFileSync(tools, JSON.stringify({ tools: [ECHO_TOOL] }));
    const set = await startReplicaSet(cleanups, { replicas: 2, serveArgs: ["--tokens-file", tokensFile(), "--tools-config", tools], metricsToken: TOKENS.ops });
    const [a, b] = set.replicas as [ServingCli, ServingCli];
    const aliceOnA = await client(a, "alice");
    const { session } = await aliceOnA.request("session/create", {});
    const sessionId = session.sessionId as string;
    await aliceOnA.request("session/subscribe", { sessionId });

    const bobOnB = await client(b, "bob", ["reverseRequests"]);
    let bobAsked = false;
    bobOnB.reverse = async () => {
      bobAsked = true;
      return { decision: "accept" };
    };
    await bobOnB.request("session/subscribe", { sessionId });
    const bobCodex = await CodexTestClient.websocket(b.baseUrl.replace("http://", "ws://"), { authorization: `Bearer ${TOKENS.bob}` });
    cleanups.push(() => bobCodex.socket.terminate());
    bobCodex.onRequest("item/commandExecution/requestApproval", () => ({ decision: "accept" }));
    await bobCodex.initialize();
    await bobCodex.request("thread/resume", { threadId: sessionId });
    const carolOnB = await client(b, "carol", ["reverseRequests"]);
    const carolAsked = deferred<void>();
    const carolDecides = deferred<void>();
    carolOnB.reverse = async () => {
      carolAsked.resolve();
      await carolDecides.promise;
      return { decision: "accept" };
    };
    await carolOnB.request("session/subscribe", { sessionId });

    const { turnId } = await aliceOnA.request("session/send", { sessionId, content: CALL_ECHO });
    await carolAsked.promise;
    await bobOnB.waitForEvent(sessionId, "approval.required");
    expect((await bobOnB.request("interaction/list", { sessionId })).interactions).toEqual([expect.objectContaining({ kind: "approval", mayDecide: false })]);
    carolDecides.resolve();
    expect(await waitForTerminal(aliceOnA, sessionId, turnId)).toMatchObject({ type: "turn.completed", payload: { response: expect.stringContaining('Tool echo-json returned: {"a":7}') } });
    await bobOnB.waitForEvent(sessionId, "approval.updated");
    // Every request went out before carol answered: bob was asked in neither dialect.
    expect(bobAsked).toBe(false);
    expect(bobCodex.serverRequests("item/commandExecution/requestApproval")).toEqual([]);
  });
});
