import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { Agent, request as httpRequest } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { AskTestClient, rpcError } from "../../support/ask-client.js";
import { openSession, waitForTerminal } from "../../support/ask-events.js";
import { RawAcpClient } from "../../support/acp-raw-client.js";
import { cleanupsAfterEach, type Cleanups } from "../../support/cleanups.js";
import { runCliProcess, runCommand, serveCli, type ServingCli } from "../../support/cli.js";
import { CodexTestClient } from "../../support/codex-client.js";
import { CALL_MARK, markToolsFile } from "../../support/mark-tool.js";
import { SseTestClient } from "../../support/sse-client.js";
import { docBlock } from "../../support/docs.js";
import { errorOf, TauTestClient } from "../../support/tau-client.js";

/**
 * `tau-gateway serve --record DIR` for real: a session of each dialect over its WebSocket against
 * the embedded host — turns, error answers, reverse requests answered — is recorded one file per
 * connection, and each recording validates with 0 invalid as written. Tokens never reach the
 * files; a recording that reaches its size bound is cut between lines, and the log says so.
 * Ask over HTTP is recorded one file per HTTP connection (`POST /rpc`) and per event stream.
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

/** POSTs `body` to `/rpc` over `agent` (a kept-alive agent of one socket is one HTTP connection). */
function post(agent: Agent, baseUrl: string, body: string, headers: Record<string, string>): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(`${baseUrl}/rpc`, { method: "POST", agent, headers: { "content-type": "application/json", ...headers } }, (response) => {
      let text = "";
      response.setEncoding("utf8");
      response.on("data", (chunk: string) => (text += chunk));
      response.on("end", () => resolve({ status: response.statusCode ?? 0, text }));
    });
    req.on("error", reject);
    req.end(body);
  });
}

/** The recording header and the message lines of a file. */
function readRecording(path: string): { header: { dialect: string; transport: string }; lines: Array<{ direction: string; message: any; batch?: boolean }> } {
  const [header, ...lines] = readFileSync(path, "utf8").trimEnd().split("\n").map((l) => JSON.parse(l));
  return { header: header.recording, lines };
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
    // The validate commands of the docs, as written, on the whole folder: every file's header names
    // its dialect, over any --dialect (validate.md's CI step, contract-tests.md's "2. Validate").
    const everyFile = [...files.values()].flat();
    const documented = [docBlock("docs/validate.md", "npx tau-gateway validate"), docBlock("docs/contract-tests.md", "npx tau-gateway validate recordings/")]
      .flatMap((block) => block.split("\n"))
      .map((line) => line.replace(/\s+#.*$/, "").trim())
      .filter((line) => line.startsWith("npx tau-gateway validate "));
    expect(documented.length).toBeGreaterThanOrEqual(5);
    for (const line of documented) {
      const words = line.replace(/\s*>\s*\S+$/, "").split(/\s+/).slice(2);
      expect(words.at(-1), line).toBe("recordings/*.jsonl");
      const r = await runCommand([...words.slice(0, -1), ...everyFile]);
      expect({ line, code: r.code }).toEqual({ line, code: 0 });
      expect(r.stdout + r.stderr, line).toContain(" valid, 0 invalid");
    }
    // A --dialect meant for headerless transcripts does not override the headers.
    for (const dialect of ["ask", "codex"]) expect((await runCommand(["validate", "--dialect", dialect, ...everyFile])).stdout, dialect).toMatch(/ valid, 0 invalid\n$/);
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

describe("serve --record: Ask over HTTP", () => {
  it("records POST /rpc one file per HTTP connection and GET /rpc/events one per stream, each validating with 0 invalid", async () => {
    const dir = recordDir(cleanups);
    const { gateway, headers } = await recordingGateway(dir);
    const base = gateway.baseUrl;
    const first = new Agent({ keepAlive: true, maxSockets: 1 });
    const second = new Agent({ keepAlive: true, maxSockets: 1 });
    cleanups.push(() => (first.destroy(), second.destroy()));

    // One HTTP connection: a session created, a turn sent (the same id again: each answer follows its request), a batch with an error answer.
    const created = await post(first, base, JSON.stringify({ jsonrpc: "2.0", id: 1, method: "session/create", params: {} }), headers);
    const sessionId = JSON.parse(created.text).result.session.sessionId as string;
    const stream = await SseTestClient.open(`${base}/rpc/events?sessionId=${encodeURIComponent(sessionId)}`, { headers });
    expect(stream.status).toBe(200);
    const sent = JSON.parse((await post(first, base, JSON.stringify({ jsonrpc: "2.0", id: 1, method: "session/send", params: { sessionId, content: "hello there" } }), headers)).text);
    await stream.waitFor(() => stream.events().some((e) => e.event.type === "turn.completed" && e.event.payload.turnId === sent.result.turnId), "the end of the turn");
    const batch = [
      { jsonrpc: "2.0", id: 2, method: "ping" },
      { jsonrpc: "2.0", id: 3, method: "session/send", params: { sessionId: "no-such-session", content: "hi" } },
    ];
    expect(JSON.parse((await post(first, base, JSON.stringify(batch), headers)).text)[1].error.code).toBeLessThan(0);

    // Another HTTP connection: an error answer; a body the HTTP layer refuses (415) is no exchange and not recorded.
    const refused = JSON.parse((await post(second, base, JSON.stringify({ jsonrpc: "2.0", id: "x", method: "session/events", params: { sessionId: "no-such-session" } }), headers)).text);
    expect(refused.error.code).toBeLessThan(0);
    expect((await post(second, base, "ping", { ...headers, "content-type": "text/plain" })).status).toBe(415);
    // A stream refused before it starts has no events and leaves no file.
    expect((await SseTestClient.open(`${base}/rpc/events?sessionId=no-such-session`, { headers })).status).toBe(404);
    first.destroy();
    second.destroy();

    const paths = (await stopAndRead(gateway, dir)).get("ask")!;
    const recordings = new Map(paths.map((path) => [readRecording(path).header.transport, { path, ...readRecording(path) }]));
    expect(paths).toHaveLength(3);
    const posts = paths.map(readRecording).filter((r) => r.header.transport === "http POST /rpc");
    expect(posts).toHaveLength(2);
    const [withSession, withError] = posts[0]!.lines.length > posts[1]!.lines.length ? posts : [posts[1]!, posts[0]!];
    expect(withSession!.lines.map((l) => [l.direction, l.message.method ?? l.message.id])).toEqual([
      ["client", "session/create"],
      ["server", 1],
      ["client", "session/send"],
      ["server", 1],
      ["client", "ping"],
      ["client", "session/send"],
      ["server", 2],
      ["server", 3],
    ]);
    expect(withError!.lines.map((l) => [l.direction, l.message.method ?? l.message.error?.code])).toEqual([
      ["client", "session/events"],
      ["server", refused.error.code],
    ]);
    // The stream: every event it delivered, as the session/event notification whose params its frame carries.
    const events = recordings.get("sse GET /rpc/events")!;
    expect(events.lines.every((l) => l.direction === "server" && l.message.method === "session/event")).toBe(true);
    expect(events.lines.map((l) => l.message.params)).toEqual(stream.events());
    expect(events.lines.length).toBeGreaterThan(2);
    for (const path of paths) {
      const lines = readFileSync(path, "utf8").trimEnd().split("\n").length - 1;
      expect((await runCommand(["validate", path])).stdout, path).toBe(`${lines} valid, 0 invalid\n`);
      expect(readFileSync(path, "utf8")).not.toContain(SECRET);
    }
  });
});

describe("serve --record: the folder's size bound", () => {
  it("cuts the open recordings once the folder holds its bound, records no new connection, logs it once, and keeps serving", async () => {
    const dir = recordDir(cleanups);
    // What the folder held before counts against its bound.
    writeFileSync(join(dir, "earlier.jsonl"), "x".repeat(3000));
    const { gateway, ws, headers } = await recordingGateway(dir, ["--record-max-bytes", "5000"]);
    const ask = await AskTestClient.websocket(`${ws}/rpc`, { headers });
    for (let i = 0; i < 20; i++) await ask.request("ping");
    await ask.waitFor(() => /recording stopped: the recording folder reached its size limit/.test(gateway.stderr()), "the log line");
    // Still served after the cut, on the cut connection, on a new one and over HTTP; none of it recorded.
    expect(await ask.request("ping")).toMatchObject({ status: "ok" });
    const later = await AskTestClient.websocket(`${ws}/rpc`, { headers });
    expect(await later.request("ping")).toMatchObject({ status: "ok" });
    expect((await post(new Agent(), gateway.baseUrl, JSON.stringify({ jsonrpc: "2.0", id: 1, method: "ping" }), headers)).status).toBe(200);
    later.socket.close();
    ask.socket.close();

    const files = await stopAndRead(gateway, dir);
    const [path, ...others] = files.get("ask")!;
    expect(others).toEqual([]);
    const total = readdirSync(dir).reduce((sum, name) => sum + statSync(join(dir, name)).size, 0);
    expect(total).toBeLessThanOrEqual(5000);
    expect(readFileSync(path!, "utf8").endsWith("\n")).toBe(true);
    const r = await runCommand(["validate", path!]);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^\d+ valid, 0 invalid\n$/);
    // Cut before the 20 pings and their answers were written.
    expect(readRecording(path!).lines.length).toBeLessThan(40);
    expect(gateway.stderr().match(/recording stopped: the recording folder reached its size limit/g)).toHaveLength(1);
    expect(gateway.stderr()).toContain(path!);
    expect(gateway.stderr()).toContain("5000");
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
