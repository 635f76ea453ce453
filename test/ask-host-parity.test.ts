import { spawn } from "node:child_process";
import { mkdtempSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";
import { createInterface } from "node:readline";
import { describe, expect, it } from "vitest";
import { AskTestClient, rpcError } from "./support/ask-client.js";
import { cleanupsAfterEach } from "./support/cleanups.js";
import { repoRoot } from "./support/cli.js";
import { startTestGateway } from "./support/gateway.js";

/**
 * What the Ask host's own minitests (ask-app-server 0.4.8, test/server_test.rb) assert, ported in
 * our words — each block names the test it comes from — plus the small answers an Ask client
 * relies on: `params: null`, the host's error words, the ping count of closed sessions. Run over
 * WebSocket `/rpc` and over `tau-gateway stdio` as ask-terminal spawns it (no "jsonrpc" member).
 */

const cleanups = cleanupsAfterEach();

/** Sends `message` as it is and resolves with the answer carrying its id. */
async function raw(client: AskTestClient, message: Record<string, unknown>): Promise<any> {
  client.send(message);
  const answer = () => client.received.find((m) => (m as { id?: unknown }).id === message.id && !("method" in (m as object)));
  await client.waitFor(() => answer() !== undefined, `the answer to ${JSON.stringify(message)}`);
  return answer();
}

async function hostParity(client: AskTestClient, cwd: string): Promise<void> {
  // test_session_abort: aborting a session that runs nothing answers aborted:true and names it.
  const { session } = await client.request("session/create", {});
  const sessionId: string = session.sessionId;
  expect(await client.request("session/abort", { sessionId })).toEqual({ aborted: true, sessionId });

  // test_workspace_read_state: the workspace, and the settings block with the current model and
  // the permissions mode; the mode is the canonical approval word.
  expect(await client.request("workspace/readState", {})).toEqual({
    workspace: { path: cwd, name: basename(cwd), gitBranch: null, mode: "require" },
    settings: { model: { current: { modelId: null, providerId: null } }, permissions: { mode: "require" } },
  });
  expect(await client.request("workspace/readState", { sessionId })).toEqual({
    workspace: { path: cwd, name: basename(cwd), gitBranch: null, mode: "require", sessionId, running: false },
    settings: { model: { current: { modelId: "scripted-1", providerId: "tau-gateway" } }, permissions: { mode: "require" } },
  });
  for (const [mode, word] of [["auto", "auto"], ["yolo", "off"], ["never", "off"], ["on_request", "require"], ["plan", "require"]] as const) {
    const other = (await client.request("session/create", { mode })).session.sessionId;
    const state = await client.request("workspace/readState", { sessionId: other });
    expect([state.workspace.mode, state.settings.permissions.mode], mode).toEqual([word, word]);
  }

  // test_interaction_request_permission_query: a client sending interaction/requestPermission gets
  // the mode and whether something is pending, not -32601.
  expect(await client.request("interaction/requestPermission", { requestId: "q1", toolName: "bash" })).toEqual({ mode: "require", pending: false });
  expect(await client.request("interaction/requestPermission", { sessionId })).toEqual({ mode: "require", pending: false });
  expect((await rpcError(client.request("interaction/requestPermission", { sessionId: "no-such-session" }))).code).toBe(-32004);

  // params: null is no params.
  expect(await raw(client, { id: "null-ping", method: "ping", params: null })).toMatchObject({ id: "null-ping", result: { status: "ok" } });
  expect(await raw(client, { id: "null-create", method: "session/create", params: null })).toMatchObject({ result: { session: { sessionId: expect.any(String) } } });
  expect(await raw(client, { id: "null-send", method: "session/send", params: null })).toMatchObject({
    error: { code: -32602, message: expect.stringMatching(/^method session\/send missing required field "(sessionId|content)"$/) },
  });

  // A closed session stops counting in ping and is gone for every method.
  const before = (await client.request("ping")).sessions as number;
  expect(await client.request("session/close", { sessionId })).toEqual({ closed: true, sessionId });
  expect((await client.request("ping")).sessions).toBe(before - 1);
  const gone = await rpcError(client.request("session/events", { sessionId }));
  expect([gone.code, gone.message]).toEqual([-32004, `-32004: Session ${sessionId} not found`]);
  expect((await client.request("session/list", { limit: 100 })).sessions.map((s: { sessionId: string }) => s.sessionId)).not.toContain(sessionId);
  expect(client.invalid).toEqual([]);
}

describe("the Ask host's own assertions", () => {
  it("over WebSocket /rpc", async () => {
    const gw = await cleanups.stopAfterTest(startTestGateway());
    await hostParity(await gw.client(), gw.cwd);
  });

  it("over tau-gateway stdio without the jsonrpc member, as ask-terminal speaks it", async () => {
    const cwd = realpathSync(mkdtempSync(join(tmpdir(), "ask-parity-stdio-")));
    const child = spawn(join(repoRoot, "node_modules/.bin/tsx"), ["src/cli/main.ts", "stdio", "--default-cwd", cwd, "--jsonrpc-member", "omit"], { cwd: repoRoot });
    const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
    cleanups.push(async () => {
      if (child.exitCode === null) {
        child.stdin.end();
        await exited;
      }
      rmSync(cwd, { recursive: true, force: true });
    });
    let stderr = "";
    child.stderr.setEncoding("utf8").on("data", (d: string) => (stderr += d));
    const client = new AskTestClient((line) => child.stdin.write(`${line}\n`), { jsonrpc: false });
    createInterface({ input: child.stdout }).on("line", (line) => client.receive(line));

    await hostParity(client, cwd);
    expect(client.received.every((m) => !("jsonrpc" in (m as object)))).toBe(true);
    child.stdin.end();
    expect(await exited, stderr).toBe(0);
  });
});
