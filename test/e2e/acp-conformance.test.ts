import { mkdtempSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { agentMessageProblems } from "../support/acp-official-schema.js";
import { spawnAcpAgent, type AgentProcess } from "../support/acp-process.js";
import { Cleanups } from "../support/cleanups.js";

/**
 * Points of ACP v1 where the official SDK's own agent sets the behaviour a client relies on,
 * checked on `tau-gateway acp` (embedded Tau host) with raw lines, so nothing in between smooths
 * them over; every line the gateway writes is checked against the official schema.
 */

const cleanups = new Cleanups();
const workDir = realpathSync(mkdtempSync(join(tmpdir(), "tau-gateway-acp-conformance-")));

afterAll(async () => {
  await cleanups.runNewestFirst();
  rmSync(workDir, { recursive: true, force: true });
});

/** Sends one request line and resolves with the gateway's answer to it. */
async function ask(agent: AgentProcess, id: string | number | null, method: string, params?: unknown): Promise<any> {
  const before = agent.sent().length;
  agent.write({ jsonrpc: "2.0", id, method, ...(params === undefined ? {} : { params }) });
  return agent.next((m) => m.id === id && !("method" in m) && agent.sent().indexOf(m) >= before);
}

async function endCleanly(agent: AgentProcess): Promise<void> {
  agent.closeInput();
  expect(await agent.exit).toEqual({ code: 0, signal: null });
  expect(agentMessageProblems(agent.sent(), agent.received())).toEqual([]);
}

describe("tau-gateway acp against the SDK agent's behaviour", () => {
  it("answers every request before initialize -32600, an unknown method included; after it, an unknown method is -32601", async () => {
    const agent = spawnAcpAgent([], cleanups);
    expect((await ask(agent, 1, "session/fork", {})).error).toMatchObject({ code: -32600, message: expect.stringContaining("before initialize") });
    expect((await ask(agent, 2, "_vendor/thing", {})).error).toMatchObject({ code: -32600 });
    expect((await ask(agent, 3, "session/list", {})).error).toMatchObject({ code: -32600 });
    expect((await ask(agent, 4, "initialize", { protocolVersion: 1 })).result.protocolVersion).toBe(1);
    expect((await ask(agent, 5, "session/fork", {})).error).toMatchObject({ code: -32601 });
    await endCleanly(agent);
  }, 60_000);

  it("takes a request whose id is null (ids may be null, an integer or a string) and answers it with that id", async () => {
    const agent = spawnAcpAgent([], cleanups);
    expect((await ask(agent, "init", "initialize", { protocolVersion: 1 })).result.protocolVersion).toBe(1);
    // (Once only: the schema check pairs answers with requests by id.)
    expect(await ask(agent, null, "session/list", {})).toEqual({ jsonrpc: "2.0", id: null, result: { sessions: [] } });
    await endCleanly(agent);
  }, 60_000);
});
