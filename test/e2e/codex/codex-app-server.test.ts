import type { ChildProcessWithoutNullStreams } from "node:child_process";
import { mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { PassThrough, Writable } from "node:stream";
import { describe, expect, it } from "vitest";
import { BridgeStack } from "../../../src/cli/bridge-stack.js";
import { attachCodexJsonRpc } from "../../../src/transports/codex-jsonrpc.js";
import { serveNdjsonStdio } from "../../../src/transports/ndjson-endpoint.js";
import { eventually } from "../../support/ask-events.js";
import { cleanupsAfterEach } from "../../support/cleanups.js";
import { spawnCli } from "../../support/cli.js";
import { agentText, CodexTestClient, completedItems } from "../../support/codex-client.js";
import { startTestGateway } from "../../support/gateway.js";

/**
 * `tau-gateway app-server`: the Codex dialect as NDJSON on stdio, as clients spawn it — settings
 * from the environment only, a conversation with an approval, exit 0 on stdin EOF and on SIGTERM —
 * and, in-process, the write order the AI SDK provider depends on. Last, a Tau host restart under
 * a running turn, which still ends with exactly one turn/completed.
 */

const cleanups = cleanupsAfterEach();

function tempDir(prefix: string): string {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), prefix)));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** Spawns `tau-gateway app-server` (from source) with only environment settings, and a client on its stdio. */
function spawnAppServer(env: NodeJS.ProcessEnv): { child: ChildProcessWithoutNullStreams; client: CodexTestClient; exit: Promise<number | null>; stderr: () => string } {
  const child = spawnCli(["app-server"], env) as ChildProcessWithoutNullStreams;
  let stderr = "";
  child.stderr.setEncoding("utf8").on("data", (d: string) => (stderr += d));
  const exit = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
  cleanups.push(() => {
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
  });
  const client = new CodexTestClient((line) => child.stdin.write(`${line}\n`));
  createInterface({ input: child.stdout }).on("line", (line) => client.receive(line));
  return { child, client, exit, stderr: () => stderr };
}

describe("tau-gateway app-server", () => {
  it("serves a conversation with an approval, configured from the environment, and exits 0 when stdin ends", async () => {
    const cwd = tempDir("app-server-cwd-");
    const toolsFile = join(tempDir("app-server-tools-"), "tools.json");
    writeFileSync(toolsFile, JSON.stringify({ tools: [{ name: "echo-args", description: "Prints its arguments.", parameters: { type: "object" }, command: "cat" }] }));
    const { child, client, exit, stderr } = spawnAppServer({ TAU_GATEWAY_TOOLS_CONFIG: toolsFile, TAU_GATEWAY_DEFAULT_CWD: cwd });
    client.onRequest("item/commandExecution/requestApproval", () => ({ decision: "accept" }));

    await client.initialize(null);
    const { thread, cwd: threadCwd } = await client.request("thread/start", { approvalPolicy: "on-request" });
    expect(threadCwd).toBe(cwd);
    const { completed, messages } = await client.turn(thread.id, '/tool echo-args {"n":1}\nHello');
    expect(completed.params.turn.status).toBe("completed");
    expect(completedItems(messages, "commandExecution")[0]).toMatchObject({ status: "completed", aggregatedOutput: '{"n":1}' });
    expect(agentText(messages)).toContain("You said: Hello");
    expect(client.invalid).toEqual([]);

    child.stdin.end();
    expect(await exit).toBe(0);
    expect(stderr()).not.toMatch(/error/i);
  });

  it("exits 0 on SIGTERM", async () => {
    const { child, client, exit } = spawnAppServer({ TAU_GATEWAY_DEFAULT_CWD: tempDir("app-server-cwd-") });
    await client.initialize();
    child.kill("SIGTERM");
    expect(await exit).toBe(0);
  });

  it("on SIGTERM mid-turn: interrupts the turn and reports it with turn/completed (interrupted) before exiting 0", async () => {
    const { child, client, exit } = spawnAppServer({ TAU_GATEWAY_DEFAULT_CWD: tempDir("app-server-cwd-"), TAU_GATEWAY_DRAIN_TIMEOUT: "300" });
    await client.initialize();
    const { thread } = await client.request("thread/start", {});
    const { turn } = await client.request("turn/start", { threadId: thread.id, input: [{ type: "text", text: "/bash echo started\n/sleep 60000", text_elements: [] }] });
    await client.waitFor((m) => m.method === "item/completed" && m.params.item.type === "commandExecution");
    child.kill("SIGTERM");
    expect(await exit).toBe(0);
    expect(client.notifications("turn/completed")).toMatchObject([{ params: { threadId: thread.id, turn: { id: turn.id, status: "interrupted" } } }]);
    expect(client.invalid).toEqual([]);
  });

  it("writes the turn/start response on its own, and the turn's first notification one event-loop turn later", async () => {
    const cwd = tempDir("app-server-writes-");
    const stack = new BridgeStack();
    cleanups.push(() => stack.close());
    await stack.start({ upstream: "embedded", defaultCwd: cwd, eventRetention: 1000, interactionTimeoutMs: 300_000 }, [], () => undefined);
    const input = new PassThrough();
    /** Every write the transport makes, with "tick" markers where the event loop turned after a response. */
    const writes: string[] = [];
    const client = new CodexTestClient((line) => input.write(`${line}\n`));
    const output = new Writable({
      write(chunk: Buffer, _encoding, done) {
        const text = chunk.toString("utf8");
        writes.push(text);
        if (text.includes('"result"')) setImmediate(() => writes.push("tick"));
        for (const line of text.split("\n").filter(Boolean)) client.receive(line);
        done();
      },
    });
    const serving = serveNdjsonStdio(input, output, (send, transport) => attachCodexJsonRpc(stack.codex!, send, { transport }), {
      maxLineBytes: 1 << 20,
      drainTimeoutMs: 10_000,
      rule: { readsWhileDraining: true, interrupts: "on-signal" },
    });
    await client.initialize();
    const { thread } = await client.request("thread/start", {});
    const { turnId } = await client.turn(thread.id, "Hello");
    input.end();
    await serving;

    expect(writes.every((w) => w === "tick" || (w.endsWith("\n") && w.split("\n").length === 2))).toBe(true);
    const response = writes.findIndex((w) => w.includes('"result":{"turn"'));
    const firstNotification = writes.findIndex((w) => w.startsWith('{"method"') && (w.includes(turnId) || w.includes('"thread/status/changed"')));
    expect(response).toBeGreaterThanOrEqual(0);
    expect(firstNotification).toBeGreaterThan(response);
    expect(writes.slice(response + 1, firstNotification)).toContain("tick");
    expect(client.invalid).toEqual([]);
  });
});

describe("a Tau host restart under a running turn", () => {
  it("still ends the turn with exactly one turn/completed, and the thread goes on", async () => {
    const stateDir = tempDir("codex-restart-");
    const gw = await startTestGateway({ stateDir });
    cleanups.push(() => gw.stop());
    const client = await gw.codexClient();
    await client.initialize();
    const { thread } = await client.request("thread/start", { cwd: gw.cwd });
    const { turn } = await client.request("turn/start", { threadId: thread.id, input: [{ type: "text", text: "/sleep 20000\ncut off" }] });
    await client.waitFor((m) => m.method === "turn/started" && m.params.turn.id === turn.id);

    await gw.stopHost();
    await eventually(() => !gw.stack.upstream!.connected, "the bridge connection to drop");
    await gw.startHost();
    const completed = await client.turnCompleted(turn.id, 20_000);
    expect(["interrupted", "failed"]).toContain(completed.params.turn.status);

    const after = await client.turn(thread.id, "after the restart");
    expect(after.completed.params.turn.status).toBe("completed");
    expect(client.notifications("turn/completed").filter((m) => m.params.turn.id === turn.id)).toHaveLength(1);
    expect(client.invalid).toEqual([]);
  });
});
