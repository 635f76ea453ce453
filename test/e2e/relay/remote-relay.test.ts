import * as acp from "@agentclientprotocol/sdk";
import { mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { describe, expect, it } from "vitest";
import { agentMessageProblems } from "../../support/acp-official-schema.js";
import { spawnAcpAgent } from "../../support/acp-process.js";
import { AskTestClient } from "../../support/ask-client.js";
import { expectContiguous, openSession, runTurn, waitForTerminal } from "../../support/ask-events.js";
import { cleanupsAfterEach } from "../../support/cleanups.js";
import { runCommand, serveCli, type ServingCli } from "../../support/cli.js";
import { agentText, CodexTestClient } from "../../support/codex-client.js";
import { freePort } from "../../support/free-port.js";
import { spawnLineChild } from "../../support/line-child.js";

/**
 * `acp --remote`, `app-server --remote` and `stdio --remote`: each a real child process reading
 * its stdin, relaying to a real `serve` process, where clients of every dialect share its sessions.
 */

const cleanups = cleanupsAfterEach();
const TIMEOUT = 120_000;

async function startServe(args: string[] = [], env: NodeJS.ProcessEnv = {}): Promise<ServingCli & { ws: string; cwd: string }> {
  const cwd = realpathSync(mkdtempSync(join(tmpdir(), "tau-gateway-remote-")));
  cleanups.push(() => rmSync(cwd, { recursive: true, force: true }));
  const gateway = await serveCli(["--port", "0", "--log-level", "warn", "--default-cwd", cwd, ...args], cleanups, env);
  return { ...gateway, ws: gateway.baseUrl.replace("http://", "ws://"), cwd };
}

async function askClient(url: string, headers: Record<string, string> = {}): Promise<AskTestClient & { socket: import("ws").WebSocket }> {
  const client = await AskTestClient.websocket(url, { headers });
  cleanups.push(() => client.socket.terminate());
  return client;
}

/** `tau-gateway ARGS` with an Ask client on its stdin/stdout. */
function askThroughChild(args: string[], env: NodeJS.ProcessEnv = {}) {
  let client!: AskTestClient;
  const child = spawnLineChild(args, cleanups, (line) => client.receive(line), env);
  client = new AskTestClient(child.write);
  return { client, child };
}

/** `tau-gateway ARGS` with a Codex client on its stdin/stdout. */
function codexThroughChild(args: string[], env: NodeJS.ProcessEnv = {}) {
  let client!: CodexTestClient;
  const child = spawnLineChild(args, cleanups, (line) => client.receive(line), env);
  client = new CodexTestClient(child.write);
  return { client, child };
}

/** `acp --remote` on `gateway`, spoken to line by line: initialized (id 1) and with a new session (id 2). */
async function acpAgentWithSession(gateway: { ws: string; cwd: string }) {
  const agent = spawnAcpAgent(["--remote", gateway.ws], cleanups);
  agent.write({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: 1, clientCapabilities: {} } });
  await agent.next((m) => m.id === 1);
  agent.write({ jsonrpc: "2.0", id: 2, method: "session/new", params: { cwd: gateway.cwd, mcpServers: [] } });
  const { sessionId } = (await agent.next((m) => m.id === 2)).result as { sessionId: string };
  return { agent, sessionId };
}

const textOf = (updates: acp.SessionUpdate[], kind: "agent_message_chunk" | "user_message_chunk") =>
  updates.flatMap((u) => (u.sessionUpdate === kind && u.content.type === "text" ? [u.content.text] : [])).join("");

describe("stdio commands relaying to a running gateway (--remote)", () => {
  it(
    "acp --remote: the official ACP SDK client loads a session an Ask client made on the same gateway, sees its turns, and prompts it",
    async () => {
      const gateway = await startServe();
      const ask = await askClient(`${gateway.ws}/rpc`);
      const sessionId = await openSession(ask);
      await runTurn(ask, sessionId, "hello from Ask");

      const agent = spawnAcpAgent(["--remote", gateway.ws], cleanups);
      const updates: acp.SessionNotification[] = [];
      const app = acp
        .client({ name: "remote-tests" })
        .onNotification("session/update", async ({ params }) => {
          updates.push(params);
        });
      const ofSession = () => updates.filter((n) => n.sessionId === sessionId).map((n) => n.update);
      await app.connectWith(acp.ndJsonStream(agent.input, agent.output), async (ctx) => {
        await ctx.request(acp.methods.agent.initialize, { protocolVersion: acp.PROTOCOL_VERSION, clientCapabilities: {}, clientInfo: { name: "zed-like", version: "1" } });
        const listed = await ctx.request(acp.methods.agent.session.list, {});
        expect(listed.sessions.map((s) => s.sessionId)).toContain(sessionId);
        await ctx.request(acp.methods.agent.session.load, { sessionId, cwd: gateway.cwd, mcpServers: [] });
        // The Ask client's turn, replayed.
        expect(textOf(ofSession(), "user_message_chunk")).toContain("hello from Ask");
        expect(textOf(ofSession(), "agent_message_chunk")).toContain("You said: hello from Ask");

        // A turn the Ask client starts now streams to the ACP client live.
        const before = ofSession().length;
        await runTurn(ask, sessionId, "live from Ask");
        await expect.poll(() => textOf(ofSession().slice(before), "agent_message_chunk"), { timeout: 15_000 }).toBe("You said: live from Ask");

        // And the ACP client's own prompt is seen by the Ask client.
        const answer = await ctx.request(acp.methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text: "from the editor" }] });
        expect(answer.stopReason).toBe("end_turn");
        await ask.waitFor(
          () => ask.eventsOf(sessionId).some((e) => e.type === "turn.completed" && (e.payload as { response?: string }).response === "You said: from the editor"),
          "the editor's turn to complete",
        );
      });
      agent.closeInput();
      expect(await agent.exit).toEqual({ code: 0, signal: null });
      expect(agentMessageProblems(agent.sent(), agent.received())).toEqual([]);
      expectContiguous(ask.eventsOf(sessionId));
      expect(agent.stderr()).toBe("");
    },
    TIMEOUT,
  );

  it(
    "app-server pointed at the gateway through TAU_GATEWAY_REMOTE (the fixed command line a spawning SDK uses): lists and resumes another client's thread",
    async () => {
      const gateway = await startServe();
      const tui = await CodexTestClient.websocket(`${gateway.ws}/`);
      cleanups.push(() => tui.socket.terminate());
      await tui.initialize();
      const { thread } = await tui.request("thread/start", { cwd: gateway.cwd });
      const first = await tui.turn(thread.id, "hello from the terminal UI");
      expect(agentText(first.messages)).toBe("You said: hello from the terminal UI");

      const { client: sdk, child } = codexThroughChild(["app-server"], { TAU_GATEWAY_REMOTE: gateway.ws });
      await sdk.initialize();
      const listed = await sdk.request("thread/list", {});
      expect(listed.data.map((t: { id: string }) => t.id)).toContain(thread.id);
      const resumed = await sdk.request("thread/resume", { threadId: thread.id });
      expect(resumed.thread.id).toBe(thread.id);
      expect(JSON.stringify(resumed.thread.turns)).toContain("You said: hello from the terminal UI");

      const second = await sdk.turn(thread.id, "from the SDK");
      expect(agentText(second.messages)).toBe("You said: from the SDK");
      // The terminal UI, on the same thread, saw that turn too.
      const seen = await tui.turnCompleted(second.turnId);
      expect(seen.params.threadId).toBe(thread.id);

      child.end();
      expect(await child.exit).toEqual({ code: 0, signal: null });
      expect(sdk.invalid).toEqual([]);
      expect(tui.invalid).toEqual([]);
      expect(child.stderr()).toBe("");
    },
    TIMEOUT,
  );

  it(
    "stdio --remote: an Ask terminal shares a session with a WebSocket client; lines answered before exit; an oversized line refused as locally",
    async () => {
      const gateway = await startServe();
      const phone = await askClient(`${gateway.ws}/rpc`);
      const sessionId = await openSession(phone);

      const { client: terminal, child } = askThroughChild(["stdio", "--remote", `${gateway.baseUrl}/`, "--max-message-bytes", "2000"]);
      await terminal.request("initialize", { client: { name: "ask-terminal", version: "1" } });
      await terminal.request("session/subscribe", { sessionId });
      const fromTerminal = await runTurn(terminal, sessionId, "from the terminal");
      expect(fromTerminal.terminal).toMatchObject({ type: "turn.completed", payload: { response: "You said: from the terminal" } });
      const fromPhone = await runTurn(phone, sessionId, "from the phone");
      await waitForTerminal(terminal, sessionId, fromPhone.sent.turnId);
      // Both saw the same one stream.
      expect(terminal.eventsOf(sessionId)).toEqual(phone.eventsOf(sessionId).slice(0, terminal.eventsOf(sessionId).length));
      expectContiguous(terminal.eventsOf(sessionId));

      // A line over --max-message-bytes is skipped and answered as the local command does; the next one goes through.
      terminal.sendRaw(JSON.stringify({ jsonrpc: "2.0", id: 99, method: "ping", params: { pad: "x".repeat(3000) } }));
      const listed = await terminal.request("session/list", {});
      expect(listed.sessions.map((s: { sessionId: string }) => s.sessionId)).toContain(sessionId);
      const refusal = child.lines.map((line) => JSON.parse(line)).find((m) => m.id === null);
      expect(refusal).toEqual({
        jsonrpc: "2.0",
        id: null,
        error: { code: -32600, message: "Invalid Request: a message of more than 2000 bytes was skipped (the gateway's limit)", data: { limit: 2000 } },
      });

      // Ids under the relay's own reserved prefix are the client's like any other: each answered, under its id.
      for (const id of ["tau-gateway-relay:1", "tau-gateway-relay:client:2"]) terminal.send({ id, method: "session/list", params: {} });
      await terminal.waitFor(() => terminal.received.filter((m: any) => typeof m.id === "string" && m.id.startsWith("tau-gateway-relay:")).length === 2, "the answers");
      expect(terminal.received.filter((m: any) => typeof m.id === "string" && m.id.startsWith("tau-gateway-relay:"))).toEqual([
        { jsonrpc: "2.0", id: "tau-gateway-relay:1", result: expect.objectContaining({ sessions: expect.any(Array) }) },
        { jsonrpc: "2.0", id: "tau-gateway-relay:client:2", result: expect.objectContaining({ sessions: expect.any(Array) }) },
      ]);

      // Input ends right after a request: it is answered before the relay exits.
      const linesBefore = child.lines.length;
      child.write(JSON.stringify({ jsonrpc: "2.0", id: 500, method: "session/resume", params: { sessionId } }));
      child.end();
      expect(await child.exit).toEqual({ code: 0, signal: null });
      expect(child.lines.slice(linesBefore).map((line) => JSON.parse(line))).toContainEqual(
        expect.objectContaining({ id: 500, result: expect.objectContaining({ sessionId }) }),
      );
      expect(terminal.invalid).toEqual([]);
    },
    TIMEOUT,
  );

  it(
    "a gateway with a token: refused without it (exit 1, the URL named), accepted with --remote-token and with TAU_GATEWAY_REMOTE_TOKEN",
    async () => {
      const token = "relay-secret-token-1234";
      const gateway = await startServe([], { TAU_GATEWAY_TOKEN: token });

      const without = askThroughChild(["stdio", "--remote", gateway.ws]);
      expect(await without.child.exit).toEqual({ code: 1, signal: null });
      expect(without.child.stderr()).toContain(`tau-gateway stdio: the gateway at ${gateway.ws}/rpc refused the connection (401 Unauthorized)`);

      const wrong = askThroughChild(["acp", "--remote", gateway.ws, "--remote-token", "not-the-token"]);
      expect(await wrong.child.exit).toEqual({ code: 1, signal: null });
      expect(wrong.child.stderr()).toContain("401 Unauthorized");
      expect(wrong.child.stderr()).not.toContain("not-the-token");

      // Recorded as the local command records (--record FILE), without the token.
      const recorded = join(gateway.cwd, "relay.jsonl");
      const withFlag = askThroughChild(["stdio", "--remote", gateway.ws, "--remote-token", token, "--record", recorded]);
      expect(await withFlag.client.request("session/list", {})).toMatchObject({ sessions: [] });
      withFlag.child.end();
      expect(await withFlag.child.exit).toEqual({ code: 0, signal: null });
      expect(await runCommand(["validate", recorded])).toMatchObject({ code: 0, stdout: "2 valid, 0 invalid\n" });
      expect(readFileSync(recorded, "utf8")).not.toContain(token);

      const withVariable = codexThroughChild(["app-server"], { TAU_GATEWAY_REMOTE: gateway.ws, TAU_GATEWAY_REMOTE_TOKEN: token });
      await withVariable.client.initialize();
      expect(await withVariable.client.request("thread/list", {})).toMatchObject({ data: [] });
      withVariable.child.end();
      expect(await withVariable.child.exit).toEqual({ code: 0, signal: null });

      // Nobody listening: exit 1 with a message naming the URL.
      gateway.child.kill("SIGKILL");
      await gateway.exit;
      const gone = askThroughChild(["stdio", "--remote", gateway.ws, "--remote-token", token]);
      expect(await gone.child.exit).toEqual({ code: 1, signal: null });
      expect(gone.child.stderr()).toContain(`tau-gateway stdio: cannot reach the gateway at ${gateway.ws}/rpc`);
      expect(gone.child.stderr()).not.toContain(token);
    },
    TIMEOUT,
  );

  it(
    "a token the restarted gateway no longer takes ends the relay: exit 1 with the 401 message",
    async () => {
      const port = await freePort();
      const first = await startServe(["--port", String(port)], { TAU_GATEWAY_TOKEN: "the-old-token-123" });
      const { client, child } = askThroughChild(["stdio", "--remote", first.ws, "--remote-token", "the-old-token-123"]);
      expect(await client.request("session/list", {})).toMatchObject({ sessions: [] });
      first.child.kill("SIGKILL");
      await first.exit;
      await startServe(["--port", String(port)], { TAU_GATEWAY_TOKEN: "the-new-token-456" });
      expect(await child.exit).toEqual({ code: 1, signal: null });
      expect(child.stderr()).toContain(`tau-gateway stdio: the gateway at ${first.ws}/rpc refused the connection (401 Unauthorized)`);
      expect(child.stderr()).not.toContain("token-123");
    },
    TIMEOUT,
  );

  /** A serve whose agent may call `echo-args` (a command tool that asks for approval). */
  async function serveWithTool() {
    const tools = join(realpathSync(mkdtempSync(join(tmpdir(), "tau-gateway-remote-tools-"))), "tools.json");
    cleanups.push(() => rmSync(dirname(tools), { recursive: true, force: true }));
    writeFileSync(tools, JSON.stringify({ tools: [{ name: "echo-args", description: "Prints its JSON arguments.", parameters: { type: "object" }, command: "cat" }] }));
    return startServe(["--tools-config", tools]);
  }

  it(
    "an approval the lost gateway asked is withdrawn from the ACP client in ACP's words ($/cancel_request); its prompt, waiting to rejoin its turn, is answered -32012 when the relay stops",
    async () => {
      const gateway = await serveWithTool();
      const agent = spawnAcpAgent(["--remote", gateway.ws, "--drain-timeout", "300"], cleanups);
      agent.write({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: 1, clientCapabilities: {} } });
      await agent.next((m) => m.id === 1);
      agent.write({ jsonrpc: "2.0", id: 2, method: "session/new", params: { cwd: gateway.cwd, mcpServers: [] } });
      const { sessionId } = (await agent.next((m) => m.id === 2)).result as { sessionId: string };
      agent.write({ jsonrpc: "2.0", id: 3, method: "session/prompt", params: { sessionId, prompt: [{ type: "text", text: '/tool echo-args {"a":1}' }] } });
      const asked = await agent.next((m) => m.method === "session/request_permission" && "id" in m);

      gateway.child.kill("SIGKILL");
      await gateway.exit;
      expect(await agent.next((m) => m.method === "$/cancel_request")).toEqual({ jsonrpc: "2.0", method: "$/cancel_request", params: { requestId: asked.id } });
      // The prompt waits for a new link to rejoin its turn (up to the hold bound); the gateway does not come back.
      agent.closeInput();
      expect(await agent.next((m) => m.id === 3)).toMatchObject({
        jsonrpc: "2.0",
        id: 3,
        error: { code: -32012, message: "gateway unavailable, retry: the relay stopped before the gateway answered" },
      });
      expect(await agent.exit).toEqual({ code: 0, signal: null });
      expect(agentMessageProblems(agent.sent(), agent.received())).toEqual([]);
    },
    TIMEOUT,
  );

  it(
    "an approval the lost gateway asked is withdrawn from the Codex client in Codex's words (serverRequest/resolved)",
    async () => {
      const gateway = await serveWithTool();
      const { client, child } = codexThroughChild(["app-server", "--remote", gateway.ws]);
      await client.initialize();
      const { thread } = await client.request("thread/start", { cwd: gateway.cwd, approvalPolicy: "on-request" });
      await client.request("turn/start", { threadId: thread.id, input: [{ type: "text", text: '/tool echo-args {"a":1}', text_elements: [] }] });
      const asked = await client.waitFor((m) => m.method === "item/commandExecution/requestApproval" && "id" in m);

      gateway.child.kill("SIGKILL");
      await gateway.exit;
      expect(await client.waitFor((m) => m.method === "serverRequest/resolved")).toEqual({ method: "serverRequest/resolved", params: { threadId: thread.id, requestId: asked.id } });
      child.end();
      expect(await child.exit).toEqual({ code: 0, signal: null });
      expect(client.invalid).toEqual([]);
    },
    TIMEOUT,
  );

  it(
    "acp --remote on SIGTERM: reads no more, the prompt in flight is answered, then exit 0",
    async () => {
      const gateway = await startServe();
      const { agent, sessionId } = await acpAgentWithSession(gateway);
      agent.write({ jsonrpc: "2.0", id: 3, method: "session/prompt", params: { sessionId, prompt: [{ type: "text", text: "/think pondering\n/sleep 1500\nawake" }] } });
      await agent.next((m) => m.method === "session/update" && m.params.update.sessionUpdate === "agent_thought_chunk");
      agent.child.kill("SIGTERM");
      expect(await agent.next((m) => m.id === 3)).toEqual({ jsonrpc: "2.0", id: 3, result: expect.objectContaining({ stopReason: "end_turn" }) });
      expect(await agent.exit).toEqual({ code: 0, signal: null });
      expect(agentMessageProblems(agent.sent(), agent.received())).toEqual([]);
    },
    TIMEOUT,
  );

  it("refuses a flag that only a local bridge uses, and a URL naming another dialect's route (exit 2)", async () => {
    for (const [args, message] of [
      [["acp", "--remote", "ws://127.0.0.1:1", "--upstream", "embedded"], "tau-gateway acp: --upstream has no effect with --remote"],
      [["stdio", "--remote", "ws://127.0.0.1:1/acp"], 'tau-gateway stdio: invalid --remote "ws://127.0.0.1:1/acp": names the /acp route'],
      [["app-server", "--remote", "ftp://127.0.0.1:1"], "must be a ws://, wss://, http:// or https:// URL"],
    ] as const) {
      const result = await runCommand([...args]);
      expect(result.code, args.join(" ")).toBe(2);
      expect(result.stderr).toContain(message);
    }
  });

  it("never repeats a token or password given in the --remote URL, in a usage error or a connect error", async () => {
    for (const [args, code, message] of [
      [["stdio", "--remote", "ws://127.0.0.1:1/?access_token=secret-in-query-1"], 2, 'invalid --remote "ws://127.0.0.1:1/?access_token=REDACTED": put the token in --remote-token'],
      [["acp", "--remote", "ws://someone:secret-password-2@127.0.0.1:1/rpc"], 2, 'invalid --remote "ws://127.0.0.1:1/rpc": names the /rpc route'],
      [["app-server", "--remote", "http://someone:secret-password-3@127.0.0.1:1/?token=secret-in-query-4"], 1, "cannot reach the gateway at ws://127.0.0.1:1/?token=REDACTED"],
    ] as const) {
      const result = await runCommand([...args]);
      expect(result.code, args.join(" ")).toBe(code);
      expect(result.stderr).toContain(message);
      expect(result.stderr).not.toMatch(/secret-/);
    }
  });
});
