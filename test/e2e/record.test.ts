import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { AskTestClient, rpcError } from "../support/ask-client.js";
import { openSession, waitForTerminal } from "../support/ask-events.js";
import { RawAcpClient } from "../support/acp-raw-client.js";
import { cleanupsAfterEach, type Cleanups } from "../support/cleanups.js";
import { runCliProcess, runCommand, serveCli, type ServingCli } from "../support/cli.js";
import { CodexTestClient } from "../support/codex-client.js";
import { CALL_MARK, markToolsFile } from "../support/mark-tool.js";
import { errorOf, TauTestClient } from "../support/tau-client.js";

/**
 * `tau-gateway serve --record DIR` for real: a session of each dialect over its WebSocket against
 * the embedded host — turns, error answers, reverse requests answered — is recorded one file per
 * connection, and each recording validates with 0 invalid as written. Tokens never reach the
 * files; a recording that reaches its size bound is cut between lines, and the log says so.
 */

const cleanups = cleanupsAfterEach();
const SECRET = "s3cret-token-never-recorded";

function recordDir(c: Cleanups): string {
  const dir = mkdtempSync(join(tmpdir(), "tau-gateway-record-"));
  c.push(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** A gateway recording into `dir`, with the `mark` command tool (approvals) and a bearer token. */
async function recordingGateway(dir: string, extra: string[] = []): Promise<{ gateway: ServingCli; ws: string; headers: Record<string, string> }> {
  const { file } = markToolsFile(cleanups);
  const gateway = await serveCli(["--port", "0", "--record", dir, "--tools-config", file, "--token", SECRET, "--keepalive-ms", "0", ...extra], cleanups);
  return { gateway, ws: gateway.baseUrl.replace("http://", "ws://"), headers: { authorization: `Bearer ${SECRET}` } };
}

/** Stops the gateway (which closes every recording) and returns the recordings by dialect. */
async function stopAndRead(gateway: ServingCli, dir: string): Promise<Map<string, string[]>> {
  gateway.child.kill("SIGTERM");
  expect((await gateway.exit).code).toBe(0);
  const files = new Map<string, string[]>();
  for (const name of readdirSync(dir).sort()) {
    const dialect = name.split("-")[0]!;
    files.set(dialect, [...(files.get(dialect) ?? []), join(dir, name)]);
  }
  return files;
}

describe("serve --record", () => {
  it("records a real session of each dialect, one file per connection, that validates with 0 invalid", async () => {
    const dir = recordDir(cleanups);
    const { gateway, ws, headers } = await recordingGateway(dir);

    // Ask: a turn that needs a permission (a reverse request, allowed), a failing turn, error answers.
    const ask = await AskTestClient.websocket(`${ws}/rpc?access_token=${SECRET}`);
    ask.reverse = () => ({ decision: "allow" });
    const sessionId = await openSession(ask, { capabilities: ["reverseRequests"] });
    const { turnId } = await ask.request("session/send", { sessionId, content: CALL_MARK });
    await waitForTerminal(ask, sessionId, turnId);
    const failing = await ask.request("session/send", { sessionId, content: "/fail on purpose" });
    await waitForTerminal(ask, sessionId, failing.turnId);
    expect((await rpcError(ask.request("session/send", { sessionId: "no-such-session", content: "hi" }))).code).toBeLessThan(0);
    expect((await rpcError(ask.request("plan/approve", { sessionId }))).code).toBe(-32007);
    ask.socket.close();

    // Codex: a turn whose command is approved (a server request answered), and an error answer.
    const codex = await CodexTestClient.websocket(ws, headers);
    codex.onRequest("item/commandExecution/requestApproval", () => ({ decision: "accept" }));
    await codex.initialize();
    const { thread } = await codex.request("thread/start", { approvalPolicy: "on-request" });
    const turn = await codex.turn(thread.id, CALL_MARK);
    expect(turn.completed.params.turn.status).toBe("completed");
    expect(codex.serverRequests("item/commandExecution/requestApproval")).toHaveLength(1);
    expect((await codex.requestRaw("thread/read", { threadId: "no-such-thread" })).error).toBeDefined();
    codex.socket.close();

    // ACP: a prompt whose command needs permission (session/request_permission, answered), an error answer.
    const acp = await RawAcpClient.connect(`${ws}/acp`, headers);
    await acp.initialize();
    const created = await acp.request("session/new", { cwd: tmpdir(), mcpServers: [] });
    const acpSession = created.result.sessionId as string;
    const prompted = await acp.request("session/prompt", { sessionId: acpSession, prompt: [{ type: "text", text: CALL_MARK }] });
    expect(prompted.result.stopReason).toBe("end_turn");
    expect(acp.received.some((m) => m.method === "session/request_permission")).toBe(true);
    expect((await acp.request("session/load", { sessionId: "no-such-session", cwd: tmpdir(), mcpServers: [] })).error).toBeDefined();
    await acp.close();

    // Tau passthrough: a turn, a failing turn and the host's error answers.
    // Its reverse direction is the client-tool channel: the host calls the tool the client advertised, the client answers.
    const tau = await TauTestClient.connect(`${ws}/tau?access_token=${SECRET}`);
    await tau.initialize([{ name: "lookup", description: "Looks a word up.", parameters: { type: "object", properties: { q: { type: "string" } } } }]);
    const tauSession = await tau.createSession(tmpdir());
    await tau.call("session.observe", { sessionId: tauSession });
    const withTool = tau.send("session.submit", { sessionId: tauSession, text: '/tool lookup {"q":"tau"}', historyEntryId: "h1" });
    const toolCall = await tau.waitFor((m) => m.type === "session.clientTool.call" && m.sessionId === tauSession, "session.clientTool.call");
    await tau.call("session.clientTool.ack", { sessionId: tauSession, callId: toolCall.callId });
    await tau.call("session.clientTool.result", { sessionId: tauSession, callId: toolCall.callId, ok: true, content: [{ type: "text", text: "found" }] });
    await withTool.response;
    await tau.call("session.submit", { sessionId: tauSession, text: "/fail on purpose", historyEntryId: "h2" });
    expect(errorOf(await tau.request("session.observe", { sessionId: "no-such-session" })).code).toBe("not_found");
    await tau.close();

    const files = await stopAndRead(gateway, dir);
    expect([...files.keys()].sort()).toEqual(["acp", "ask", "codex", "tau"]);
    for (const [dialect, paths] of files) {
      expect(paths, dialect).toHaveLength(1);
      const text = readFileSync(paths[0]!, "utf8");
      expect(text, dialect).not.toContain(SECRET);
      const lines = text.trimEnd().split("\n").map((l) => JSON.parse(l));
      expect(lines[0], dialect).toEqual({ recording: expect.objectContaining({ format: 1, dialect }) });
      for (const line of lines.slice(1)) expect(line, dialect).toEqual({ direction: expect.stringMatching(/^(client|server)$/), time: expect.any(String), message: expect.any(Object) });
      const r = await runCommand(["validate", paths[0]!]);
      expect(r.stdout, dialect).toBe(`${lines.length - 1} valid, 0 invalid\n`);
      expect(r.code, dialect).toBe(0);
    }
    // What each recording holds: the reverse requests and their answers, the error answers.
    const read = (dialect: string) => readFileSync(files.get(dialect)![0]!, "utf8");
    expect(read("ask")).toContain('"method":"interaction/requestPermission"');
    expect(read("ask")).toContain('"decision":"allow"');
    expect(read("ask")).toContain('"code":-32007');
    expect(read("codex")).toContain('"method":"item/commandExecution/requestApproval"');
    expect(read("codex")).toContain('"decision":"accept"');
    expect(read("acp")).toContain('"method":"session/request_permission"');
    expect(read("tau")).toContain('"code":"not_found"');
    expect(read("tau")).toContain('"type":"session.clientTool.call"');
    expect(read("tau")).toContain('"method":"session.clientTool.result"');
  });

  it("records what a client sends wrong as it came, and validate flags exactly that", async () => {
    const dir = recordDir(cleanups);
    const { gateway, ws, headers } = await recordingGateway(dir);
    const ask = await AskTestClient.websocket(`${ws}/rpc`, { headers });
    await ask.request("ping");
    ask.socket.send("{not json");
    expect((await rpcError(ask.request("session/teleport", {}))).code).toBe(-32601);
    ask.socket.send(JSON.stringify([{ jsonrpc: "2.0", id: "b1", method: "ping" }, { jsonrpc: "2.0", id: "b2", method: "ping" }]));
    await ask.waitFor(() => ask.received.some((m: any) => m.id === "b2"), "the batch's answers");
    ask.socket.close();
    const [path] = (await stopAndRead(gateway, dir)).get("ask")!;
    const r = await runCommand(["validate", "--format", "json", path!]);
    const out = r.stdout.trimEnd().split("\n").map((l) => JSON.parse(l));
    // The text that was not JSON and the request for an unknown method are the client's; every answer, the -32601 included, correlates.
    expect(out.slice(0, -1).map((o) => [o.line, o.pointer, o.message.split(":")[0]])).toEqual([
      [4, "", "not valid JSON"],
      [6, "/method", 'unknown client method "session/teleport"'],
    ]);
    expect(out.at(-1)).toEqual({ valid: 8, invalid: 2 });
  });

  it("records each client of the Unix socket (--socket) as an Ask connection", async () => {
    const dir = recordDir(cleanups);
    const socketPath = join(dir, "..", `${dir.split("/").pop()}.sock`);
    cleanups.push(() => rmSync(socketPath, { force: true }));
    const { gateway } = await recordingGateway(dir, ["--socket", socketPath]);
    const client = await AskTestClient.unixSocket(socketPath);
    await client.request("ping");
    expect((await rpcError(client.request("session/events", { sessionId: "no-such-session" }))).code).toBeLessThan(0);
    client.socket.end();
    await new Promise((resolve) => client.socket.once("close", resolve));
    const [path] = (await stopAndRead(gateway, dir)).get("ask")!;
    const lines = readFileSync(path!, "utf8").trimEnd().split("\n").map((l) => JSON.parse(l));
    expect(lines[0].recording).toMatchObject({ dialect: "ask", transport: "unix socket" });
    expect(lines.slice(1).map((l) => l.direction)).toEqual(["client", "server", "client", "server"]);
    expect((await runCommand(["validate", path!])).stdout).toBe("4 valid, 0 invalid\n");
  });

  it("cuts a recording at its size bound between two lines, and logs it", async () => {
    const dir = recordDir(cleanups);
    const { gateway, ws, headers } = await recordingGateway(dir, ["--record-max-file-bytes", "2048"]);
    const ask = await AskTestClient.websocket(`${ws}/rpc`, { headers });
    for (let i = 0; i < 20; i++) await ask.request("ping");
    ask.socket.close();
    const [path] = (await stopAndRead(gateway, dir)).get("ask")!;
    expect(statSync(path!).size).toBeLessThanOrEqual(2048);
    expect(readFileSync(path!, "utf8").endsWith("\n")).toBe(true);
    expect((await runCommand(["validate", path!])).code).toBe(0);
    expect(gateway.stderr()).toMatch(/recording cut: the file reached its size limit/);
    expect(gateway.stderr()).toContain(path!);
  });
});

describe("--record FILE of the stdio commands", () => {
  const requests: Record<string, object[]> = {
    stdio: [
      { jsonrpc: "2.0", id: 1, method: "initialize", params: { client: { name: "rec", version: "1" } } },
      { jsonrpc: "2.0", id: 2, method: "session/create", params: {} },
      { jsonrpc: "2.0", id: 3, method: "session/events", params: { sessionId: "no-such-session" } },
      { jsonrpc: "2.0", id: 4, method: "ping" },
    ],
    "app-server": [
      { id: 1, method: "initialize", params: { clientInfo: { name: "rec", version: "1" } } },
      { method: "initialized" },
      { id: 2, method: "thread/start", params: {} },
      { id: 3, method: "thread/read", params: { threadId: "no-such-thread" } },
    ],
    acp: [
      { jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: 1, clientCapabilities: {} } },
      { jsonrpc: "2.0", id: 2, method: "session/new", params: { cwd: tmpdir(), mcpServers: [] } },
      { jsonrpc: "2.0", id: 3, method: "session/load", params: { sessionId: "no-such-session", cwd: tmpdir(), mcpServers: [] } },
    ],
  };

  it.each(Object.keys(requests))("%s records its client's session, errors included, and it validates with 0 invalid", async (command) => {
    const dir = recordDir(cleanups);
    const path = join(dir, `${command}.jsonl`);
    const run = await runCliProcess([command, "--record", path], { stdin: requests[command]!.map((m) => JSON.stringify(m)).join("\n") + "\n" });
    expect(run.code, run.stderr).toBe(0);
    const lines = readFileSync(path, "utf8").trimEnd().split("\n").map((l) => JSON.parse(l));
    expect(lines[0].recording.dialect).toBe({ stdio: "ask", "app-server": "codex", acp: "acp" }[command]);
    expect(lines.filter((l) => l.direction === "client").map((l) => l.message)).toEqual(requests[command]);
    // Every request was answered, one of them with an error.
    const answers = lines.filter((l) => l.direction === "server" && "id" in l.message && !("method" in l.message));
    expect(answers.filter((l) => l.message.error)).toHaveLength(1);
    expect((await runCommand(["validate", path])).stdout).toBe(`${lines.length - 1} valid, 0 invalid\n`);
  });

  it("says so and exits 2 when the file cannot be written", async () => {
    const r = await runCommand(["acp", "--record", join(tmpdir(), "no-such-dir-for-recording", "x.jsonl")]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/^tau-gateway acp: cannot record to .*: ENOENT\n$/);
  });
});
