import { ElicitRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import WebSocket from "ws";
import { cleanupsAfterEach, type Cleanups } from "../../support/cleanups.js";
import { runCliProcess, runCommand, serveCli } from "../../support/cli.js";
import { CALL_MARK, markToolsFile } from "../../support/mark-tool.js";
import { startInspectorGateway } from "../../support/inspector-gateway.js";
import { httpTransport, sdkClient, webSocketTransport } from "../../support/mcp-client.js";

/**
 * MCP connections in the gateway's records: `serve --record` writes one file per Streamable HTTP
 * session and per `/mcp/ws` socket, `tau-gateway mcp --record FILE` its stdio connection, and
 * `tau-gateway validate` (with `--dialect mcp` or by the header) checks them against the MCP
 * registry, flagging exactly the message that breaks it; the inspector shows MCP frames with the
 * same verdicts.
 */

const cleanups = cleanupsAfterEach();

function recordDir(c: Cleanups): string {
  const dir = mkdtempSync(join(tmpdir(), "tau-gateway-mcp-record-"));
  c.push(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

const lineCount = (path: string) => readFileSync(path, "utf8").trimEnd().split("\n").length - 1;

describe("MCP in recordings", () => {
  it("serve --record: a Streamable HTTP session and a WebSocket, each one file that validates, an invalid message flagged", async () => {
    const dir = recordDir(cleanups);
    const { file } = markToolsFile(cleanups);
    const gateway = await serveCli(["--port", "0", "--record", dir, "--tools-config", file, "--keepalive-ms", "0"], cleanups);

    // Over HTTP: a turn whose command is approved by a form, its reply streamed as progress.
    const http = httpTransport(`${gateway.baseUrl}/mcp`);
    const client = sdkClient({ elicitation: true });
    client.setRequestHandler(ElicitRequestSchema, async () => ({ action: "accept", content: { decision: "approve" } }));
    await client.connect(http);
    const progress: string[] = [];
    const started = await client.callTool({ name: "tau", arguments: { prompt: CALL_MARK, cwd: tmpdir() } }, undefined, { onprogress: (p) => void progress.push(p.message ?? "") });
    expect(started.structuredContent).toEqual(expect.objectContaining({ status: "completed" }));
    expect(progress.length).toBeGreaterThan(1);
    await http.inner.terminateSession();
    await client.close();

    // Over the WebSocket: the SDK client lists the tools, then a raw client sends a call whose name is no string.
    const ws = webSocketTransport(`${gateway.baseUrl.replace("http://", "ws://")}/mcp/ws`);
    const wsClient = sdkClient();
    await wsClient.connect(ws);
    expect((await wsClient.listTools()).tools).toHaveLength(5);
    await wsClient.close();
    const raw = new WebSocket(`${gateway.baseUrl.replace("http://", "ws://")}/mcp/ws`);
    await new Promise((resolve) => raw.once("open", resolve));
    const answers: string[] = [];
    raw.on("message", (data) => void answers.push(data.toString()));
    const answer = (count: number) => new Promise<void>((resolve) => raw.on("message", () => answers.length === count && resolve()));
    // One message at a time, each after the answer before it: the recording's lines come in this order.
    const initialized = answer(1);
    raw.send(JSON.stringify({ jsonrpc: "2.0", id: 0, method: "initialize", params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "raw", version: "1" } } }));
    await initialized;
    const called = answer(2);
    raw.send(JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" }));
    raw.send(JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: 42 } }));
    await called;
    expect(JSON.parse(answers[1]!)).toEqual(expect.objectContaining({ id: 1, error: expect.objectContaining({ code: -32602 }) }));
    raw.close();
    await new Promise((resolve) => raw.once("close", resolve));

    gateway.child.kill("SIGTERM");
    expect((await gateway.exit).code).toBe(0);
    const files = readdirSync(dir).sort().map((name) => join(dir, name));
    const headers = files.map((path) => JSON.parse(readFileSync(path, "utf8").split("\n")[0]!).recording as { dialect: string; transport: string });
    expect(headers.map((h) => [h.dialect, h.transport]).sort()).toEqual([
      ["mcp", "http /mcp"],
      ["mcp", "websocket /mcp/ws"],
      ["mcp", "websocket /mcp/ws"],
    ]);
    for (const path of files) {
      const text = readFileSync(path, "utf8");
      const invalid = text.includes('"name":42');
      const r = await runCommand(["validate", "--dialect", "mcp", ...(invalid ? ["--format", "json"] : []), path]);
      if (invalid) {
        const out = r.stdout.trimEnd().split("\n").map((l) => JSON.parse(l));
        expect(out.slice(0, -1)).toEqual([expect.objectContaining({ line: 5, pointer: "/params/name" })]);
        expect(out.at(-1)).toEqual({ valid: lineCount(path) - 1, invalid: 1 });
        expect(r.code).toBe(1);
      } else {
        expect(r.stdout, path).toBe(`${lineCount(path)} valid, 0 invalid\n`);
        expect(r.code).toBe(0);
      }
    }
    const httpText = readFileSync(files[headers.findIndex((h) => h.transport === "http /mcp")]!, "utf8");
    expect(httpText).toContain('"method":"notifications/progress"');
    expect(httpText).toContain('"method":"elicitation/create"');
    expect(httpText).toContain('"decision":"approve"');
  });

  it("tau-gateway mcp --record FILE records its stdio connection, errors included, and it validates with 0 invalid", async () => {
    const dir = recordDir(cleanups);
    const path = join(dir, "mcp.jsonl");
    const requests = [
      { jsonrpc: "2.0", id: 0, method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "rec", version: "1" } } },
      { jsonrpc: "2.0", method: "notifications/initialized" },
      { jsonrpc: "2.0", id: 1, method: "tools/list" },
      { jsonrpc: "2.0", id: 2, method: "resources/read", params: { uri: "tau://session/no-such-session" } },
      { jsonrpc: "2.0", id: 3, method: "tools/call", params: { name: "tau-sessions", arguments: {} } },
    ];
    const run = await runCliProcess(["mcp", "--record", path], { stdin: requests.map((m) => JSON.stringify(m)).join("\n") + "\n", env: { HOME: dir } });
    expect(run.code, run.stderr).toBe(0);
    const lines = readFileSync(path, "utf8").trimEnd().split("\n").map((l) => JSON.parse(l));
    expect(lines[0].recording).toEqual(expect.objectContaining({ dialect: "mcp" }));
    expect(lines.filter((l) => l.direction === "client").map((l) => l.message)).toEqual(requests);
    expect(lines.filter((l) => l.direction === "server" && l.message.error)).toEqual([expect.objectContaining({ message: expect.objectContaining({ id: 2, error: expect.objectContaining({ code: -32002 }) }) })]);
    expect((await runCommand(["validate", path])).stdout).toBe(`${lines.length - 1} valid, 0 invalid\n`);
  });

  it("shows MCP frames in the inspector with the validator's verdicts", async () => {
    const gw = await cleanups.stopAfterTest(startInspectorGateway());
    const http = httpTransport(`${gw.baseUrl}/mcp`);
    const client = sdkClient();
    await client.connect(http);
    cleanups.push(() => client.close());
    const replied = await client.callTool({ name: "tau", arguments: { prompt: "Inspected", cwd: gw.cwd } });
    expect(replied.structuredContent).toEqual(expect.objectContaining({ text: "You said: Inspected" }));
    const bad = await fetch(`${gw.baseUrl}/mcp`, {
      method: "POST",
      headers: { "content-type": "application/json", accept: "application/json, text/event-stream", "mcp-session-id": http.sessionId!, "mcp-protocol-version": "2025-11-25" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 77, method: "resources/read", params: { uri: 5 } }),
    });
    expect(await bad.text()).toContain('"code":-32602');

    const connection = gw.hub.snapshot().connections.find((c) => c.dialect === "mcp")!;
    expect(connection).toMatchObject({ transport: "http /mcp", client: { name: "tau-gateway-tests" } });
    const frames = gw.hub.trace(connection.id)!.frames();
    expect(frames.find((f) => f.method === "tools/call")).toMatchObject({ direction: "client", kind: "request", verdict: { status: "valid" } });
    expect(frames.some((f) => f.direction === "server" && f.kind === "response" && f.verdict.status === "valid")).toBe(true);
    const notValid = frames.filter((f) => f.verdict.status !== "valid");
    expect(notValid).toEqual([expect.objectContaining({ direction: "client", method: "resources/read", verdict: expect.objectContaining({ status: "invalid" }) })]);
    expect(notValid[0]!.verdict.issues[0]!.pointer).toBe("/params/uri");
    expect(frames.find((f) => f.kind === "error")).toMatchObject({ answers: { index: notValid[0]!.index } });
  });

  it("shows each MCP frame that is about a session with that session, as the page's session: filter reads it", async () => {
    const gw = await cleanups.stopAfterTest(startInspectorGateway());
    const http = httpTransport(`${gw.baseUrl}/mcp`);
    const client = sdkClient();
    await client.connect(http);
    cleanups.push(() => client.close());
    const started = await client.callTool({ name: "tau", arguments: { prompt: "Inspected", cwd: gw.cwd } });
    const { sessionId } = started.structuredContent as { sessionId: string };
    await client.callTool({ name: "tau-reply", arguments: { sessionId, prompt: "Streamed" } }, undefined, { onprogress: () => undefined });
    await client.subscribeResource({ uri: `tau://session/${sessionId}` });
    await client.readResource({ uri: `tau://session/${sessionId}` });
    await client.callTool({ name: "tau-history", arguments: { sessionId } });

    const connection = gw.hub.snapshot().connections.find((c) => c.dialect === "mcp")!;
    const frames = gw.hub.trace(connection.id)!.frames();
    const about = (f: (typeof frames)[number]) => [f.direction, f.kind, f.method ?? ""].join(" ");
    const withSession = frames.filter((f) => f.session === sessionId).map(about);
    // The tau call names no session until its answer; everything after names it.
    expect(withSession).toEqual(
      expect.arrayContaining([
        "server response ",
        "client request tools/call",
        "server notification notifications/progress",
        "client request resources/subscribe",
        "client request resources/read",
      ]),
    );
    const progress = frames.filter((f) => f.method === "notifications/progress");
    expect(progress.length).toBeGreaterThan(0);
    expect(progress.every((f) => f.session === sessionId)).toBe(true);
    const answers = frames.filter((f) => f.direction === "server" && f.kind === "response" && f.session === sessionId);
    // tau, tau-reply, resources/read and tau-history answer with the session.
    expect(answers.length).toBeGreaterThanOrEqual(4);
    // No frame names another session; initialize, tools/list and the like name none.
    expect(frames.filter((f) => f.session !== undefined && f.session !== sessionId)).toEqual([]);
    expect(frames.find((f) => f.method === "initialize")?.session).toBeUndefined();
    expect(http.problems()).toEqual([]);
  });
});
