import * as acp from "@agentclientprotocol/sdk";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { agentMessageProblems } from "../../support/acp-official-schema.js";
import { spawnAcpAgent, spawnTauHost, type AgentProcess, type HostProcess } from "../../support/acp-process.js";
import { Cleanups } from "../../support/cleanups.js";

/**
 * The official ACP SDK's client driving `tau-gateway acp` as an editor does: spawned as a process
 * speaking NDJSON on its stdin/stdout, on a Tau host running in a process of its own (so a session
 * outlives the agent process that made it). Every line the gateway writes is checked against the
 * official schema.
 */

const cleanups = new Cleanups();
const workDir = mkdtempSync(join(tmpdir(), "tau-gateway-acp-"));
const toolsFile = join(workDir, "tools.json");
writeFileSync(
  toolsFile,
  JSON.stringify({
    tools: [
      {
        name: "echo-args",
        description: "Prints the JSON arguments it was given.",
        parameters: { type: "object", properties: { a: { type: "integer" } }, required: ["a"], additionalProperties: false },
        command: "cat",
      },
    ],
  }),
);
let host: HostProcess;

beforeAll(async () => {
  host = await spawnTauHost([], cleanups);
}, 60_000);

afterAll(async () => {
  await cleanups.runNewestFirst();
  rmSync(workDir, { recursive: true, force: true });
});

type PermissionAnswer = (params: acp.RequestPermissionRequest) => acp.RequestPermissionResponse | Promise<acp.RequestPermissionResponse>;
type Update = acp.SessionUpdate;

/** An SDK client app whose permission and elicitation answers a test scripts; it records every update it was sent. */
function scriptedClient() {
  const state = {
    permission: ((p) => ({ outcome: { outcome: "selected", optionId: p.options[0]!.optionId } })) as PermissionAnswer,
    permissionRequests: [] as acp.RequestPermissionRequest[],
    elicitations: [] as acp.CreateElicitationRequest[],
    elicitationAnswer: { action: "accept", content: { answer: "blue" } } as acp.CreateElicitationResponse,
    updates: [] as acp.SessionNotification[],
  };
  const app = acp
    .client({ name: "tau-gateway-tests" })
    .onRequest("session/request_permission", async ({ params }) => {
      state.permissionRequests.push(params);
      return state.permission(params);
    })
    .onRequest("elicitation/create", async ({ params }) => {
      state.elicitations.push(params);
      return state.elicitationAnswer;
    })
    .onNotification("session/update", async ({ params }) => {
      state.updates.push(params);
    });
  return { app, state };
}

type ClientState = ReturnType<typeof scriptedClient>["state"];

/**
 * Spawns an agent process, runs `op` with an SDK client connected to it, then lets go of the agent
 * as an editor does (ends its stdin) and expects it to exit 0, every line it wrote valid.
 */
async function withAgent(op: (ctx: acp.ClientContext, state: ClientState, agent: AgentProcess) => Promise<void>): Promise<AgentProcess> {
  const agent = spawnAcpAgent(["--upstream", host.url, "--tools-config", toolsFile], cleanups);
  const { app, state } = scriptedClient();
  await app.connectWith(acp.ndJsonStream(agent.input, agent.output), (ctx) => op(ctx, state, agent));
  agent.closeInput();
  expect(await agent.exit).toEqual({ code: 0, signal: null });
  expect(agentMessageProblems(agent.sent(), agent.received())).toEqual([]);
  return agent;
}

/** Reads a session's updates until its prompt stops. */
async function untilStop(session: acp.ActiveSession): Promise<{ updates: Update[]; stopReason: acp.StopReason }> {
  const updates: Update[] = [];
  for (;;) {
    const message = await session.nextUpdate();
    if (message.kind === "stop") return { updates, stopReason: message.stopReason };
    updates.push(message.update);
  }
}

const textOf = (updates: Update[], kind: "agent_message_chunk" | "agent_thought_chunk" | "user_message_chunk") =>
  updates.flatMap((u) => (u.sessionUpdate === kind && u.content.type === "text" ? [u.content.text] : [])).join("");

/** initialize as a client that can show forms and notices. */
function initialize(ctx: acp.ClientContext) {
  return ctx.request(acp.methods.agent.initialize, {
    protocolVersion: acp.PROTOCOL_VERSION,
    clientCapabilities: { elicitation: { form: {} }, session: { notices: {} } },
    clientInfo: { name: "tau-gateway-tests", version: "1" },
  });
}

const choose = (kind: acp.PermissionOptionKind): PermissionAnswer => (p) => ({
  outcome: { outcome: "selected", optionId: p.options.find((o) => o.kind === kind)!.optionId },
});

describe("tau-gateway acp with the official ACP SDK client", () => {
  let sessionId = "";
  const cwd = workDir;

  it("initializes, creates a session and streams a prompt turn, a tool call included", async () => {
    await withAgent(async (ctx, state) => {
      const init = await initialize(ctx);
      expect(init).toMatchObject({
        protocolVersion: 1,
        agentCapabilities: { loadSession: true, promptCapabilities: { image: false, audio: false, embeddedContext: true }, sessionCapabilities: { list: {}, resume: {}, close: {} } },
        authMethods: [],
        agentInfo: { name: "tau-gateway" },
      });
      const session = await ctx.buildSession({ cwd, mcpServers: [{ name: "files", command: "/bin/true", args: [], env: [] }] }).start();
      sessionId = session.sessionId;
      expect(session.modes).toMatchObject({ currentModeId: "on_request", availableModes: [{ id: "on_request" }, { id: "auto" }, { id: "plan" }] });

      void session.prompt("/think pondering\n/bash echo hi from bash\nHello there");
      const { updates, stopReason } = await untilStop(session);
      expect(stopReason).toBe("end_turn");
      // The MCP servers were reported as not taken, after the session/new answer.
      expect(state.updates[0]!.update).toMatchObject({ sessionUpdate: "notice", severity: "warning", title: "MCP servers not supported" });
      expect(textOf(updates, "agent_thought_chunk")).toBe("pondering");
      expect(textOf(updates, "agent_message_chunk")).toBe("You said: Hello there\nTool bash returned: hi from bash");
      const call = updates.find((u) => u.sessionUpdate === "tool_call");
      expect(call).toMatchObject({ kind: "execute", title: "echo hi from bash", name: "bash", status: "in_progress", rawInput: { command: "echo hi from bash" } });
      const done = updates.find((u) => u.sessionUpdate === "tool_call_update");
      expect(done).toMatchObject({ toolCallId: (call as acp.ToolCall).toolCallId, status: "completed", content: [{ type: "content", content: { type: "text", text: "hi from bash\n" } }] });
      expect(updates.at(-1)).toMatchObject({ sessionUpdate: "usage_update", cost: { currency: "USD" } });

      void session.prompt("/length\nA long answer");
      expect((await untilStop(session)).stopReason).toBe("max_tokens");
      await expect(session.prompt("/fail the model broke")).rejects.toMatchObject({ code: -32603, message: "the model broke" });
    });
  }, 90_000);

  it("asks permission for command tools: allowed, rejected, and always (remembered for the session)", async () => {
    await withAgent(async (ctx, state) => {
      await initialize(ctx);
      const session = await ctx.buildSession(cwd).start();

      state.permission = choose("allow_once");
      void session.prompt('/tool echo-args {"a":1}');
      let turn = await untilStop(session);
      expect(turn.stopReason).toBe("end_turn");
      const asked = state.permissionRequests[0]!;
      const card = turn.updates.find((u) => u.sessionUpdate === "tool_call") as acp.ToolCall & { sessionUpdate: "tool_call" };
      expect(card).toMatchObject({ name: "echo-args", kind: "execute", status: "pending", rawInput: { a: 1 } });
      expect(asked).toMatchObject({ sessionId: session.sessionId, toolCall: { toolCallId: card.toolCallId, status: "pending" } });
      expect(asked.options.map((o) => o.kind)).toEqual(["allow_once", "allow_always", "reject_once", "reject_always"]);
      expect(turn.updates.filter((u) => u.sessionUpdate === "tool_call_update").map((u) => (u as acp.ToolCallUpdate).status)).toEqual(["in_progress", "completed"]);
      expect(textOf(turn.updates, "agent_message_chunk")).toBe('Tool echo-args returned: {"a":1}');

      state.permission = choose("reject_once");
      void session.prompt('/tool echo-args {"a":2}');
      turn = await untilStop(session);
      expect(turn.updates.filter((u) => u.sessionUpdate === "tool_call_update").map((u) => (u as acp.ToolCallUpdate).status)).toEqual(["failed"]);
      expect(textOf(turn.updates, "agent_message_chunk")).toBe("Tool echo-args failed: rejected by the user");

      state.permission = choose("allow_always");
      void session.prompt('/tool echo-args {"a":3}');
      await untilStop(session);
      void session.prompt('/tool echo-args {"a":4}');
      turn = await untilStop(session);
      expect(state.permissionRequests).toHaveLength(3); // the fourth call was not asked about
      expect(textOf(turn.updates, "agent_message_chunk")).toBe('Tool echo-args returned: {"a":4}');

      const other = await ctx.buildSession(cwd).start();
      state.permission = choose("reject_always");
      void other.prompt('/tool echo-args {"a":5}');
      await untilStop(other);
      void other.prompt('/tool echo-args {"a":6}');
      turn = await untilStop(other);
      expect(state.permissionRequests).toHaveLength(4);
      expect(textOf(turn.updates, "agent_message_chunk")).toBe("Tool echo-args failed: rejected by the user: echo-args is rejected for the rest of this session");
    });
  }, 90_000);

  it("puts ask_user to the user as a form, a plan up for approval, notices, and switches modes", async () => {
    await withAgent(async (ctx, state) => {
      await initialize(ctx);
      const session = await ctx.buildSession(cwd).start();
      void session.prompt('/tool ask_user {"question":"Which colour?","options":["red","blue"]}');
      let turn = await untilStop(session);
      expect(state.elicitations).toEqual([
        expect.objectContaining({ sessionId: session.sessionId, mode: "form", message: "Which colour?", requestedSchema: expect.objectContaining({ required: ["answer"] }) }),
      ]);
      expect(textOf(turn.updates, "agent_message_chunk")).toBe("Tool ask_user returned: blue");

      state.elicitationAnswer = { action: "decline" };
      void session.prompt('/tool ask_user {"question":"Another?"}');
      turn = await untilStop(session);
      expect(textOf(turn.updates, "agent_message_chunk")).toBe("Tool ask_user failed: the user did not answer: the user declined to answer");

      state.permission = choose("allow_once");
      void session.prompt('/tool submit_plan {"plan":"- [ ] Read the code\\n- [ ] Fix the bug"}\n/notice warn Disk almost full');
      turn = await untilStop(session);
      expect(turn.updates.find((u) => u.sessionUpdate === "plan")).toEqual({
        sessionUpdate: "plan",
        entries: [
          { content: "Read the code", priority: "medium", status: "pending" },
          { content: "Fix the bug", priority: "medium", status: "pending" },
        ],
      });
      expect(state.permissionRequests.at(-1)!.options.map((o) => o.kind)).toEqual(["allow_once", "reject_once"]);
      expect(textOf(turn.updates, "agent_message_chunk")).toBe("Tool submit_plan returned: The user approved the plan. Carry it out now.");
      expect(turn.updates.find((u) => u.sessionUpdate === "notice")).toEqual({ sessionUpdate: "notice", severity: "warning", title: "Disk almost full" });
      state.permissionRequests.length = 0;

      await ctx.request(acp.methods.agent.session.setMode, { sessionId: session.sessionId, modeId: "auto" });
      expect(await session.nextUpdate()).toMatchObject({ kind: "session_update", update: { sessionUpdate: "current_mode_update", currentModeId: "auto" } });
      void session.prompt('/tool echo-args {"a":7}');
      turn = await untilStop(session);
      expect(state.permissionRequests).toEqual([]);
      expect(textOf(turn.updates, "agent_message_chunk")).toBe('Tool echo-args returned: {"a":7}');
      await expect(ctx.request(acp.methods.agent.session.setMode, { sessionId: session.sessionId, modeId: "yolo" })).rejects.toMatchObject({ code: -32602 });
    });
  }, 90_000);

  it("declines ask_user at once for a client that cannot show forms; close lets go of the session", async () => {
    await withAgent(async (ctx, state) => {
      await ctx.request(acp.methods.agent.initialize, { protocolVersion: acp.PROTOCOL_VERSION, clientCapabilities: {} });
      const session = await ctx.buildSession(cwd).start();
      void session.prompt('/tool ask_user {"question":"Which colour?"}');
      const turn = await untilStop(session);
      expect(state.elicitations).toEqual([]);
      expect(textOf(turn.updates, "agent_message_chunk")).toBe("Tool ask_user failed: the user did not answer: the user's editor cannot show questions; ask in your reply instead");

      expect(await ctx.request(acp.methods.agent.session.close, { sessionId: session.sessionId })).toEqual({});
      await expect(ctx.request(acp.methods.agent.session.prompt, { sessionId: session.sessionId, prompt: [{ type: "text", text: "still there?" }] })).rejects.toMatchObject({
        code: -32002,
      });
      // Resuming takes it up again, without its history.
      const before = state.updates.length;
      expect(await ctx.request(acp.methods.agent.session.resume, { sessionId: session.sessionId, cwd })).toMatchObject({ modes: { currentModeId: "on_request" } });
      expect(state.updates.length).toBe(before);
    });
  }, 90_000);

  it("cancels a turn mid-way, a pending permission request included, without running the tool", async () => {
    await withAgent(async (ctx, state) => {
      await initialize(ctx);
      const session = await ctx.buildSession(cwd).start();
      void session.prompt("/bash echo started\n/sleep 20000\nWorking on it");
      const first = await session.nextUpdate();
      expect(first).toMatchObject({ kind: "session_update", update: { sessionUpdate: "tool_call", name: "bash" } });
      await ctx.notify(acp.methods.agent.session.cancel, { sessionId: session.sessionId });
      let turn = await untilStop(session);
      expect(turn.stopReason).toBe("cancelled");

      // The editor cancels while it asks for permission, then answers that request `cancelled`: a denial.
      let asked: () => void = () => undefined;
      const permissionAsked = new Promise<void>((resolve) => (asked = resolve));
      let answer: (response: acp.RequestPermissionResponse) => void = () => undefined;
      state.permission = () => {
        asked();
        return new Promise((resolve) => (answer = resolve));
      };
      void session.prompt('/tool echo-args {"a":8}\nafter the tool');
      await permissionAsked;
      await ctx.notify(acp.methods.agent.session.cancel, { sessionId: session.sessionId });
      answer({ outcome: { outcome: "cancelled" } });
      turn = await untilStop(session);
      expect(turn.stopReason).toBe("cancelled");
      expect(turn.updates.filter((u) => u.sessionUpdate === "tool_call_update").map((u) => (u as acp.ToolCallUpdate).status)).toEqual(["failed"]);
    });
  }, 90_000);

  it("loads the session in a new agent process: its history replayed before the answer", async () => {
    expect(sessionId).not.toBe("");
    await withAgent(async (ctx, state) => {
      await initialize(ctx);
      const listed = await ctx.request(acp.methods.agent.session.list, { cwd });
      expect(listed.sessions.map((s) => s.sessionId)).toContain(sessionId);
      const loaded = await ctx.request(acp.methods.agent.session.load, { sessionId, cwd, mcpServers: [] });
      expect(loaded).toMatchObject({ modes: { currentModeId: "on_request" } });
      const replayed = state.updates.filter((n) => n.sessionId === sessionId).map((n) => n.update);
      expect(textOf(replayed, "user_message_chunk")).toContain("Hello there");
      expect(textOf(replayed, "agent_message_chunk")).toContain("You said: Hello there");
      expect(replayed.find((u) => u.sessionUpdate === "tool_call")).toMatchObject({ name: "bash", kind: "execute", status: "completed" });
      await expect(ctx.request(acp.methods.agent.session.load, { sessionId: "no-such-session", cwd, mcpServers: [] })).rejects.toMatchObject({
        code: -32002,
        data: { sessionId: "no-such-session" },
      });
    });
  }, 90_000);
});
