import { mkdtempSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { agentMessageProblems } from "../../support/acp-official-schema.js";
import { spawnAcpAgent, spawnTauHost, type AgentProcess, type HostProcess } from "../../support/acp-process.js";
import { Cleanups } from "../../support/cleanups.js";
import { TauTestClient } from "../../support/tau-client.js";
import { eventually } from "../../support/ask-events.js";

/**
 * How `tau-gateway acp` ends, on a Tau host in a process of its own (as `--upstream` to a real
 * `tau serve`): whether the editor closes stdin or the process gets SIGTERM mid-turn, the prompt
 * in flight gets the drain timeout, its turn is then interrupted and the prompt answered
 * `cancelled`, and the process exits 0 — no Tau turn is left running behind it.
 */

const cleanups = new Cleanups();
const workDir = realpathSync(mkdtempSync(join(tmpdir(), "tau-gateway-acp-stdio-")));
let host: HostProcess;

beforeAll(async () => {
  host = await spawnTauHost([], cleanups);
}, 60_000);

afterAll(async () => {
  await cleanups.runNewestFirst();
  rmSync(workDir, { recursive: true, force: true });
});

/** An agent with a prompt whose turn is busy for a minute, once that turn has visibly started. */
async function agentMidTurn(): Promise<{ agent: AgentProcess; sessionId: string }> {
  const agent = spawnAcpAgent(["--upstream", host.url, "--drain-timeout", "300"], cleanups);
  agent.write({ jsonrpc: "2.0", id: 0, method: "initialize", params: { protocolVersion: 1 } });
  agent.write({ jsonrpc: "2.0", id: 1, method: "session/new", params: { cwd: workDir, mcpServers: [] } });
  const { sessionId } = (await agent.next((m) => m.id === 1)).result;
  agent.write({ jsonrpc: "2.0", id: 2, method: "session/prompt", params: { sessionId, prompt: [{ type: "text", text: "/bash echo started\n/sleep 60000" }] } });
  await agent.next((m) => m.params?.update?.sessionUpdate === "tool_call_update");
  return { agent, sessionId };
}

/** The session's last turn as the Tau host has it. */
async function lastTurn(sessionId: string): Promise<{ lifecycle: string; outcome: unknown }> {
  const tau = await TauTestClient.connect(host.url);
  try {
    const response: any = await tau.request("session.snapshot", { sessionId });
    const snapshot = response.result;
    const turns = Object.values(snapshot.turns) as any[];
    return { lifecycle: snapshot.lifecycle, outcome: turns.at(-1).outcome };
  } finally {
    tau.socket.close();
  }
}

describe("tau-gateway acp ending", () => {
  for (const how of ["stdin closes", "SIGTERM"] as const) {
    it(`when ${how} mid-turn: the turn is interrupted after the drain timeout, the prompt answered cancelled, exit 0`, async () => {
      const { agent, sessionId } = await agentMidTurn();
      const stoppedAt = Date.now();
      if (how === "SIGTERM") agent.child.kill("SIGTERM");
      else agent.closeInput();
      expect(await agent.exit).toEqual({ code: 0, signal: null });
      expect(Date.now() - stoppedAt).toBeLessThan(15_000);
      expect(agent.sent().find((m: any) => m.id === 2)).toEqual({ jsonrpc: "2.0", id: 2, result: { stopReason: "cancelled" } });
      expect(await lastTurn(sessionId)).toEqual({ lifecycle: "idle", outcome: { status: "aborted", stopReason: "aborted" } });
      expect(agentMessageProblems(agent.sent(), agent.received())).toEqual([]);
      expect(agent.stderr()).toBe("");
    }, 60_000);
  }

  it("on a second SIGTERM: stops waiting for the prompt at once, interrupts its turn, answers it cancelled, exit 0", async () => {
    const agent = spawnAcpAgent(["--upstream", host.url, "--drain-timeout", "120000", "--log-level", "info"], cleanups);
    agent.write({ jsonrpc: "2.0", id: 0, method: "initialize", params: { protocolVersion: 1 } });
    agent.write({ jsonrpc: "2.0", id: 1, method: "session/new", params: { cwd: workDir, mcpServers: [] } });
    const { sessionId } = (await agent.next((m) => m.id === 1)).result;
    agent.write({ jsonrpc: "2.0", id: 2, method: "session/prompt", params: { sessionId, prompt: [{ type: "text", text: "/bash echo started\n/sleep 60000" }] } });
    await agent.next((m) => m.params?.update?.sessionUpdate === "tool_call_update");
    agent.child.kill("SIGTERM");
    // The first signal starts the drain (the prompt would get two minutes); the second ends the wait.
    await eventually(() => agent.stderr().includes('"msg":"stopping'), "the agent's log line that it is stopping");
    expect(agent.child.exitCode).toBeNull();
    agent.child.kill("SIGTERM");
    expect(await agent.exit).toEqual({ code: 0, signal: null });
    expect(agent.sent().find((m: any) => m.id === 2)).toEqual({ jsonrpc: "2.0", id: 2, result: { stopReason: "cancelled" } });
    expect(await lastTurn(sessionId)).toEqual({ lifecycle: "idle", outcome: { status: "aborted", stopReason: "aborted" } });
  }, 60_000);

  it("answers what is in flight before exiting when stdin closes", async () => {
    const agent = spawnAcpAgent(["--upstream", host.url], cleanups);
    agent.write({ jsonrpc: "2.0", id: 0, method: "initialize", params: { protocolVersion: 1 } });
    agent.write({ jsonrpc: "2.0", id: 1, method: "session/new", params: { cwd: workDir, mcpServers: [] } });
    agent.closeInput();
    expect(await agent.exit).toEqual({ code: 0, signal: null });
    expect(agent.sent().map((m: any) => m.id)).toEqual([0, 1]);
  }, 60_000);
});
