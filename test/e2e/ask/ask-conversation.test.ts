import type { ChildProcessWithoutNullStreams } from "node:child_process";
import { mkdtempSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { describe, expect, it } from "vitest";
import { AskTestClient } from "../../support/ask-client.js";
import { expectContiguous, expectOneTerminalPerTurn, openSession, payloadsOf, runTurn } from "../../support/ask-events.js";
import { cleanupsAfterEach } from "../../support/cleanups.js";
import { spawnCli } from "../../support/cli.js";
import { startTestGateway } from "../../support/gateway.js";

/**
 * A whole Ask conversation against the embedded host: over WebSocket `/rpc`, and over
 * `tau-gateway stdio` spawned as a client would spawn an app-server executable.
 */

const cleanups = cleanupsAfterEach();

const gateway = () => cleanups.stopAfterTest(startTestGateway());

/** `tau-gateway stdio` as a child process, with an Ask client on its stdin/stdout. */
function spawnStdio(): { client: AskTestClient; child: ChildProcessWithoutNullStreams; stderr: () => string } {
  const cwd = realpathSync(mkdtempSync(join(tmpdir(), "ask-stdio-")));
  const child = spawnCli(["stdio", "--default-cwd", cwd]) as ChildProcessWithoutNullStreams;
  let stderr = "";
  child.stderr.setEncoding("utf8").on("data", (d: string) => (stderr += d));
  const client = new AskTestClient((line) => child.stdin.write(`${line}\n`));
  createInterface({ input: child.stdout }).on("line", (line) => client.receive(line));
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  cleanups.push(async () => {
    if (child.exitCode === null) {
      child.stdin.end();
      await exited;
    }
    rmSync(cwd, { recursive: true, force: true });
  });
  return { client, child, stderr: () => stderr };
}

const CONVERSATION = "/think weighing it up\n/bash echo hello-from-bash\nHi there";

/** Runs the conversation and checks everything an Ask client should see of it. */
async function converse(client: AskTestClient): Promise<void> {
  const init = await client.request("initialize", { client: { name: "e2e", version: "1" } });
  expect(init).toMatchObject({ protocolVersion: "1.0", server: { name: "tau-gateway" } });
  expect(init.capabilities).toContain("sessionManagement");
  const { session } = await client.request("session/create", {});
  expect(session).toMatchObject({ sessionId: expect.any(String), model: expect.any(String), createdAt: expect.any(String) });
  const sessionId: string = session.sessionId;
  expect(await client.request("session/subscribe", { sessionId })).toEqual({ subscription: { sessionId, deliveryKind: "replay" } });

  const { sent, terminal } = await runTurn(client, sessionId, CONVERSATION);
  expect(sent).toEqual({ accepted: true, status: "steered", turnId: expect.any(String) });
  expect(terminal.type).toBe("turn.completed");

  const events = client.eventsOf(sessionId);
  expectContiguous(events);
  expectOneTerminalPerTurn(events);
  expect(events[0]).toEqual({ type: "session.created", seq: 1, payload: { sessionId } });
  const types = events.map((e) => e.type);
  expect(types.indexOf("turn.started")).toBeLessThan(types.indexOf("model.thinking"));
  expect(types.indexOf("model.thinking")).toBeLessThan(types.indexOf("tool.use"));
  expect(types.indexOf("tool.use")).toBeLessThan(types.indexOf("tool.result"));
  expect(types.indexOf("tool.result")).toBeLessThan(types.indexOf("model.streaming"));
  expect(types.at(-1)).toBe("turn.completed");
  expect(payloadsOf(events, "turn.started")).toEqual([{ turnId: sent.turnId }]);

  expect(payloadsOf<{ delta: string }>(events, "model.thinking").map((p) => p.delta).join("")).toBe("weighing it up");
  const [use] = payloadsOf(events, "tool.use");
  expect(use).toMatchObject({ name: "bash", args: { command: "echo hello-from-bash" } });
  const [result] = payloadsOf(events, "tool.result");
  expect(result).toMatchObject({ id: use!.id, name: "bash", isError: false });
  expect(result!.output).toContain("hello-from-bash");

  const streamed = payloadsOf<{ delta: string }>(events, "model.streaming").map((p) => p.delta).join("");
  expect(streamed).toBe("You said: Hi there\nTool bash returned: hello-from-bash");
  const completed = terminal.payload as { turnId: string; response: string; inputTokens: number; outputTokens: number; cost: number };
  expect(completed.turnId).toBe(sent.turnId);
  expect(completed.response).toBe(streamed);
  expect(completed.inputTokens).toBeGreaterThan(0);
  expect(completed.outputTokens).toBeGreaterThanOrEqual(7); // the reply's words
  expect(completed.cost).toBeCloseTo((completed.inputTokens + completed.outputTokens) * 0.000001, 12);

  // A second turn in the same session: its own start and end, the log still contiguous.
  const second = await runTurn(client, sessionId, "again");
  expect(second.terminal).toMatchObject({ type: "turn.completed", payload: { turnId: second.sent.turnId, response: "You said: again" } });
  expectContiguous(client.eventsOf(sessionId));
  expectOneTerminalPerTurn(client.eventsOf(sessionId));

  // Polling sees exactly what the subscription delivered (without a limit hasMore is null, as Ask hosts answer).
  const polled = await client.request("session/events", { sessionId });
  expect(polled).toEqual({ sessionId, events: client.eventsOf(sessionId), hasMore: null });
  expect(client.invalid).toEqual([]);
}

describe("an Ask conversation", () => {
  it("over WebSocket /rpc: thinking, a bash tool, streamed text and the completed turn with tokens and cost", async () => {
    const gw = await gateway();
    const client = await gw.client();
    await converse(client);
  });

  it("over tau-gateway stdio (NDJSON on the spawned command's stdin/stdout)", async () => {
    const { client, child, stderr } = spawnStdio();
    await converse(client);
    // Error answers are protocol, not log material: stderr carries only JSON log lines.
    await expect(client.request("session/events", { sessionId: "00000000-0000-4000-8000-000000000000" })).rejects.toMatchObject({ code: -32004 });
    // Ends when stdin closes, with exit 0.
    const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
    child.stdin.end();
    expect(await exited, stderr()).toBe(0);
    for (const line of stderr().split("\n").filter((l) => l.trim() !== "")) expect(() => JSON.parse(line), line).not.toThrow();
  });

  it("two clients on one session see the same seq'd events, whichever of them sends", async () => {
    const gw = await gateway();
    const a = await gw.client();
    const b = await gw.client();
    const sessionId = await openSession(a);
    await b.request("initialize", {});
    await b.request("session/subscribe", { sessionId });
    const first = await runTurn(a, sessionId, "from a");
    await b.waitFor(() => b.eventsOf(sessionId).some((e) => e.type === "turn.completed"), "b sees a's turn end");
    const second = await runTurn(b, sessionId, "/bash echo from-b\nfrom b");
    await a.waitFor(() => a.eventsOf(sessionId).length === b.eventsOf(sessionId).length, "a sees b's turn too");
    expect(second.terminal.type).toBe("turn.completed");
    expect(first.terminal.type).toBe("turn.completed");
    expect(a.eventsOf(sessionId)).toEqual(b.eventsOf(sessionId));
    expectContiguous(a.eventsOf(sessionId));
    expectOneTerminalPerTurn(a.eventsOf(sessionId));
    expect(payloadsOf(a.eventsOf(sessionId), "tool.use")).toHaveLength(1);
    expect([...a.invalid, ...b.invalid]).toEqual([]);
  });
});
