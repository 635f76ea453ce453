import { describe, expect, it } from "vitest";
import { RawAcpClient } from "../../support/acp-raw-client.js";
import { rpcError, type CodexTestClient } from "../../support/codex-client.js";
import { codexSuite } from "../../support/codex-suite.js";

/**
 * Ephemeral threads stay ephemeral, as in the real app-server 0.171.0 (tried there on a loopback
 * mock model): `thread/start` with `ephemeral: true` is answered `ephemeral: true`, the thread
 * runs turns but is listed to nobody (Codex thread/list, with includedThreadIds too; Ask and ACP
 * session/list), keeps nothing to resume or page through, and is gone for every dialect once its
 * last client has left. A thread that is not ephemeral stays.
 */

const suite = codexSuite([]);
const closeSocket = (c: CodexTestClient) => (c as CodexTestClient & { socket: { close(): void } }).socket.close();

async function listedEverywhere(threadId: string): Promise<{ codex: boolean; ask: boolean; acp: boolean }> {
  const codex = await suite.client();
  await codex.initialize();
  const codexIds = [
    ...(await codex.request("thread/list", {})).data,
    ...(await codex.request("thread/list", { includedThreadIds: [threadId] })).data,
  ].map((t: { id: string }) => t.id);
  const ask = await suite.gateway.client();
  const { sessions } = await ask.request("session/list", { limit: 1000 });
  const acp = await RawAcpClient.connect(suite.gateway.acpUrl);
  await acp.request("initialize", { protocolVersion: 1 });
  const acpSessions = (await acp.request("session/list", {})).result.sessions as Array<{ sessionId: string }>;
  acp.socket.close();
  return {
    codex: codexIds.includes(threadId),
    ask: (sessions as Array<{ sessionId: string }>).some((s) => s.sessionId === threadId),
    acp: acpSessions.some((s) => s.sessionId === threadId),
  };
}

describe("an ephemeral thread", () => {
  it("is answered ephemeral, runs turns, and is listed to no client of any dialect", async () => {
    const c = await suite.client();
    await c.initialize();
    const started = await c.request("thread/start", { cwd: suite.gateway.cwd, ephemeral: true });
    expect(started.thread.ephemeral).toBe(true);
    const threadId = started.thread.id as string;
    expect((await c.waitFor((m) => m.method === "thread/started")).params.thread.ephemeral).toBe(true);
    expect((await c.turn(threadId, "hello")).completed.params.turn.status).toBe("completed");

    expect(await listedEverywhere(threadId)).toEqual({ codex: false, ask: false, acp: false });
    expect((await c.request("thread/loaded/list", {})).data).toContain(threadId);
    expect((await c.request("thread/read", { threadId })).thread).toMatchObject({ id: threadId, ephemeral: true, status: { type: "idle" } });
  });

  it("keeps nothing to page through or resume, in Codex's words", async () => {
    const c = await suite.client();
    await c.initialize();
    const threadId = (await c.request("thread/start", { cwd: suite.gateway.cwd, ephemeral: true })).thread.id as string;
    await c.turn(threadId, "hello");
    expect(await rpcError(c.request("thread/read", { threadId, includeTurns: true }))).toMatchObject({ code: -32600, message: "-32600: ephemeral threads do not support includeTurns" });
    expect(await rpcError(c.request("thread/turns/list", { threadId }))).toMatchObject({ code: -32600, message: "-32600: ephemeral threads do not support thread/turns/list" });
    const other = await suite.client();
    await other.initialize();
    expect(await rpcError(other.request("thread/resume", { threadId }))).toMatchObject({ code: -32600, message: `-32600: no rollout found for thread id ${threadId}` });
  });

  it("is gone for every dialect once its last client has left; a thread that is not ephemeral stays", async () => {
    const c = await suite.client();
    await c.initialize();
    const ephemeral = (await c.request("thread/start", { cwd: suite.gateway.cwd, ephemeral: true })).thread.id as string;
    const durable = (await c.request("thread/start", { cwd: suite.gateway.cwd, ephemeral: false })).thread.id as string;
    await c.turn(ephemeral, "hello");
    // A second client joins it by id (it can: the id was shared), so the first one leaving ends nothing.
    const second = await suite.client();
    await second.initialize();
    expect((await second.turn(ephemeral, "me too")).completed.params.turn.status).toBe("completed");
    closeSocket(c);

    const ask = await suite.gateway.client();
    expect((await ask.request("session/resume", { sessionId: ephemeral })).sessionId).toBe(ephemeral);
    closeSocket(second);
    // Closing it ends it for Ask too: session/resume is -32004 once the gateway has read the close.
    for (let tries = 0; tries < 200; tries++) {
      const gone = await ask.request("session/resume", { sessionId: ephemeral }).then(() => false, () => true);
      if (gone) break;
    }
    expect((await rpcError(ask.request("session/resume", { sessionId: ephemeral }))).code).toBe(-32004);
    const reader = await suite.client();
    await reader.initialize();
    expect(await rpcError(reader.request("thread/read", { threadId: ephemeral }))).toMatchObject({ code: -32600, message: `-32600: thread not found: ${ephemeral}` });
    expect((await reader.request("thread/read", { threadId: durable })).thread).toMatchObject({ id: durable, ephemeral: false });
    expect(await listedEverywhere(durable)).toEqual({ codex: true, ask: true, acp: true });
  });
});
