import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Cleanups } from "../../support/cleanups.js";
import { ECHO_TOOL } from "../../support/echo-tool.js";
import { spawnLineChild } from "../../support/line-child.js";
import { sdkClient, stdioTransport, type RecordingTransport } from "../../support/mcp-client.js";

/**
 * The official MCP SDK client driving `tau-gateway mcp` as an MCP host does: spawned, speaking
 * JSON-RPC lines on its stdin/stdout, against the embedded Tau host. Every message the gateway
 * writes is checked against the SDK's official schema.
 */

const cleanups = new Cleanups();
const workDir = realpathSync(mkdtempSync(join(tmpdir(), "tau-gateway-mcp-")));
const toolsFile = join(workDir, "tools.json");
writeFileSync(toolsFile, JSON.stringify({ tools: [ECHO_TOOL] }));
const env = { HOME: workDir };
let client: Client;
let transport: RecordingTransport;

beforeAll(async () => {
  transport = stdioTransport(["--tools-config", toolsFile, "--default-cwd", workDir], env);
  client = sdkClient();
  await client.connect(transport);
}, 60_000);

afterAll(async () => {
  await client?.close();
  await cleanups.runNewestFirst();
  rmSync(workDir, { recursive: true, force: true });
});

describe("tau-gateway mcp over stdio", () => {
  it("negotiates the SDK's newest revision and offers tools, resources and logging", () => {
    expect(client.getServerVersion()).toEqual(expect.objectContaining({ name: "tau-gateway" }));
    expect(client.getServerCapabilities()).toEqual({ tools: { listChanged: true }, resources: { subscribe: true, listChanged: true }, logging: {} });
    expect(transport.fromServer[0]).toEqual(expect.objectContaining({ result: expect.objectContaining({ protocolVersion: "2025-11-25" }) }));
  });

  it("lists the tools with the registry's input and output schemas", async () => {
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name)).toEqual(["tau", "tau-reply", "tau-sessions", "tau-history", "tau-interrupt"]);
    const tau = tools.find((t) => t.name === "tau")!;
    expect(tau.inputSchema).toEqual(expect.objectContaining({ type: "object", required: ["prompt"] }));
    expect(tau.outputSchema).toEqual(expect.objectContaining({ type: "object", required: ["sessionId", "turnId", "status", "text"] }));
  });

  it("starts a session, streams the reply as progress, continues it, lists and reads it", async () => {
    const progress: Array<{ progress: number; message?: string }> = [];
    const started = await client.callTool({ name: "tau", arguments: { prompt: "Hello there", reasoning: "low" } }, undefined, { onprogress: (p) => void progress.push(p) });
    expect(started.isError).toBeUndefined();
    const out = started.structuredContent as { sessionId: string; status: string; text: string };
    expect(out).toEqual(expect.objectContaining({ status: "completed", text: "You said: Hello there", stopReason: "stop" }));
    expect(started.content).toEqual([{ type: "text", text: "You said: Hello there" }]);
    expect(progress.map((p) => p.message).join("")).toBe("You said: Hello there");
    expect(progress.map((p) => p.progress)).toEqual([...progress.map((p) => p.progress)].sort((a, b) => a - b));

    const again = await client.callTool({ name: "tau-reply", arguments: { sessionId: out.sessionId, prompt: "Once more" } });
    expect(again.structuredContent).toEqual(expect.objectContaining({ sessionId: out.sessionId, text: "You said: Once more" }));

    const listed = await client.callTool({ name: "tau-sessions", arguments: {} });
    expect(listed.structuredContent).toEqual({
      sessions: [expect.objectContaining({ sessionId: out.sessionId, cwd: workDir, running: false, uri: `tau://session/${out.sessionId}` })],
    });
    const history = await client.callTool({ name: "tau-history", arguments: { sessionId: out.sessionId } });
    expect((history.structuredContent as { messages: Array<{ role: string; text: string }> }).messages.map((m) => [m.role, m.text])).toEqual([
      ["user", "Hello there"],
      ["assistant", "You said: Hello there"],
      ["user", "Once more"],
      ["assistant", "You said: Once more"],
    ]);

    const { resources } = await client.listResources();
    expect(resources).toEqual([expect.objectContaining({ uri: `tau://session/${out.sessionId}`, mimeType: "text/markdown" })]);
    const read = await client.readResource({ uri: resources[0]!.uri });
    expect(read.contents[0]).toEqual(expect.objectContaining({ uri: resources[0]!.uri, text: expect.stringContaining("You said: Once more") }));
  });

  it("reports a tool's failures in its result, and protocol mistakes as JSON-RPC errors", async () => {
    const unknownSession = await client.callTool({ name: "tau-history", arguments: { sessionId: "nope" } });
    expect(unknownSession).toEqual({ content: [{ type: "text", text: expect.stringContaining('no session "nope"') }], isError: true });
    const badArguments = await client.callTool({ name: "tau", arguments: { prompt: "" } });
    expect(badArguments.isError).toBe(true);
    expect((badArguments.content as Array<{ text: string }>)[0]!.text).toMatch(/invalid arguments for tau: .*prompt/);
    await expect(client.callTool({ name: "no-such-tool", arguments: {} })).rejects.toThrow(/unknown tool "no-such-tool"/);
    await expect(client.readResource({ uri: "tau://session/nope" })).rejects.toThrow(/Resource not found/);
  });

  it("sends only messages the official schema accepts", () => {
    expect(transport.problems()).toEqual([]);
  });
});

describe("initialize over raw lines", () => {
  it("echoes a revision it speaks, answers its newest otherwise, and refuses work before initialize", async () => {
    const answers: Array<Record<string, any>> = [];
    const child = spawnLineChild(["mcp"], cleanups, (line) => answers.push(JSON.parse(line)), env);
    const waitFor = async (id: number) => {
      for (;;) {
        const found = answers.find((a) => a.id === id);
        if (found) return found;
        await new Promise((resolve) => child.child.stdout!.once("data", resolve));
      }
    };
    child.write(JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }));
    expect((await waitFor(1)).error).toEqual({ code: -32600, message: "Invalid Request: tools/list before initialize" });
    const init = (id: number, protocolVersion: string) =>
      JSON.stringify({ jsonrpc: "2.0", id, method: "initialize", params: { protocolVersion, capabilities: {}, clientInfo: { name: "raw", version: "1" } } });
    child.write(init(2, "2024-11-05"));
    expect((await waitFor(2)).result.protocolVersion).toBe("2024-11-05");
    child.write(init(3, "2025-06-18"));
    expect((await waitFor(3)).error.message).toMatch(/already done/);
    child.write(JSON.stringify({ jsonrpc: "2.0", id: null, method: "ping" }));
    child.write(JSON.stringify({ jsonrpc: "2.0", id: 4, method: "ping" }));
    expect(await waitFor(4)).toEqual({ jsonrpc: "2.0", id: 4, result: {} });
    expect(answers.find((a) => a.id === null)?.error.code).toBe(-32600);
    child.end();
    expect((await child.exit).code).toBe(0);

    const other = spawnLineChild(["mcp"], cleanups, (line) => answers.push(JSON.parse(line)), env);
    other.write(init(10, "1999-01-01"));
    for (;;) {
      const found = answers.find((a) => a.id === 10);
      if (found) {
        expect(found.result.protocolVersion).toBe("2025-11-25");
        break;
      }
      await new Promise((resolve) => other.child.stdout!.once("data", resolve));
    }
    other.end();
    await other.exit;
  });
});
