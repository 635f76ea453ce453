import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { AskTestClient, rpcError } from "../../support/ask-client.js";
import { waitForTerminal } from "../../support/ask-events.js";
import { cleanupsAfterEach } from "../../support/cleanups.js";
import type { ServingCli } from "../../support/cli.js";
import { startReplicaSet } from "../../support/replica-set.js";

/**
 * Roles live in the store: two replicas on one redis-server, every part a real process. Alice
 * creates a session through replica A (its owner); bob, whose tokens-file default is observer, is
 * refused on replica B; alice's grant made on A lets bob prompt on B, and her revoke made on B over
 * HTTP refuses him on A again.
 */

const cleanups = cleanupsAfterEach();
const TOKENS = { alice: "tok-alice-replicas-1", bob: "tok-bob-replicas-2", ops: "tok-ops-replicas-3" };
const FORBIDDEN = -32011;

function tokensFile(): string {
  const dir = mkdtempSync(join(tmpdir(), "tau-gateway-replica-roles-"));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  const file = join(dir, "tokens.json");
  writeFileSync(
    file,
    JSON.stringify([
      { id: "alice", token: TOKENS.alice, tenant: "team" },
      { id: "bob", token: TOKENS.bob, tenant: "team", sessionRole: "observer" },
      { id: "ops", token: TOKENS.ops, tenant: "operations", operator: true },
    ]),
  );
  return file;
}

async function client(replica: ServingCli, who: keyof typeof TOKENS): Promise<AskTestClient & { socket: import("ws").WebSocket }> {
  const ask = await AskTestClient.websocket(`${replica.baseUrl.replace("http://", "ws://")}/rpc`, { headers: { authorization: `Bearer ${TOKENS[who]}` } });
  cleanups.push(() => ask.socket.terminate());
  await ask.request("initialize", { client: { name: `replica-roles-${who}`, version: "1" } });
  return ask;
}

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
});
