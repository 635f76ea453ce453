import { describe, expect, it } from "vitest";
import type { CommandToolConfig } from "../../../src/bridge/interactions/index.js";
import { agentText, completedItems, rpcError, type CodexTestClient } from "../../support/codex-client.js";
import { codexSuite } from "../../support/codex-suite.js";

/**
 * The Codex app-server dialect over a real WebSocket at `/`, against the embedded Tau host and its
 * scripted agent: the handshake and bad input, a turn's notifications in Codex's order, command
 * approvals, questions, dynamic tools, interrupt and steer, history from another connection. Every
 * message the gateway sends is checked against the official Codex 0.169.0 schema.
 */

const echoArgs: CommandToolConfig = {
  name: "echo-args",
  description: "Prints the JSON arguments it was given.",
  parameters: { type: "object", properties: { a: { type: "integer" } }, required: ["a"], additionalProperties: false },
  command: "cat",
};

const suite = codexSuite([echoArgs]);
const client = () => suite.client();
const started = (c: CodexTestClient, params: Record<string, unknown> = {}) => suite.startedThread(c, params);

describe("handshake and bad input", () => {
  it("refuses everything before initialize, then serves; a second initialize is refused", async () => {
    const c = await client();
    expect(await rpcError(c.request("thread/loaded/list", {}))).toMatchObject({ code: -32600, message: "-32600: Not initialized" });
    const result = await c.initialize();
    expect(result.userAgent).toMatch(/^tau-gateway\/\S+ /);
    expect(result.platformFamily).toBe("unix");
    expect(await rpcError(c.request("initialize", { clientInfo: { name: "again", version: "1" } }))).toMatchObject({ code: -32600, message: "-32600: Already initialized" });
    expect(await c.request("account/read", {})).toEqual({ account: null, requiresOpenaiAuth: false });
    expect(await c.request("config/read", {})).toEqual({ config: {}, origins: {} });
    expect(await c.request("configRequirements/read")).toEqual({ requirements: null });
    expect(await c.request("skills/list", {})).toEqual({ data: [] });
    expect(await c.request("permissionProfile/list", {})).toEqual({ data: [], nextCursor: null });
    expect((await c.request("collaborationMode/list", {})).data).toEqual([{ name: "Default", mode: "default" }]);
    const models = await c.request("model/list", { includeHidden: true });
    expect(models.data.filter((m: { isDefault: boolean }) => m.isDefault)).toHaveLength(1);
  });

  it("answers -32601 naming an unknown method, reads a missing params as {}, -32602 naming the field", async () => {
    const c = await client();
    await c.initialize();
    expect(await rpcError(c.request("thread/fork", { threadId: "x" }))).toMatchObject({ code: -32601, message: "-32601: Method not found: thread/fork" });
    expect(await c.request("thread/loaded/list")).toEqual({ data: [], nextCursor: null });
    const bad = await rpcError(c.request("turn/start", { threadId: "t", input: "hello" }));
    expect(bad.code).toBe(-32602);
    expect(bad.message).toContain("input");
    const missing = await rpcError(c.request("thread/read", {}));
    expect(missing.code).toBe(-32602);
    expect(missing.message).toContain("threadId");
  });

  it("gives an unknown thread the not-found error, and nothing reaches Tau", async () => {
    const c = await client();
    await c.initialize();
    for (const method of ["thread/read", "thread/resume", "turn/interrupt"]) {
      const error = await rpcError(c.request(method, { threadId: "00000000-0000-4000-8000-000000000000", turnId: "u" }));
      expect(error.message, method).toBe("-32600: thread not found: 00000000-0000-4000-8000-000000000000");
    }
    // A blank id is no thread either, and is never sent to Tau (which refuses blank session ids).
    expect(await rpcError(c.request("thread/read", { threadId: " " }))).toMatchObject({ code: -32600, message: "-32600: thread not found:  " });
  });

  it("keeps experimental methods and fields for connections that opted in", async () => {
    const c = await client();
    await c.initialize(null);
    expect(await rpcError(c.request("collaborationMode/list", {}))).toMatchObject({ code: -32600, message: "-32600: collaborationMode/list requires experimentalApi capability" });
    const dynamic = await rpcError(c.request("thread/start", { dynamicTools: [{ type: "function", name: "lookup", description: "x", inputSchema: { type: "object" } }] }));
    expect(dynamic.message).toBe("-32600: thread/start.dynamicTools requires experimentalApi capability");
  });
});

describe("a turn", () => {
  it("answers turn/start first, then reports the turn in Codex's order, with exactly one turn/completed", async () => {
    const c = await client();
    const threadId = await started(c);
    // thread/started follows the thread/start response (it is caused by it), in a later write.
    const announced = await c.waitFor((m) => m.method === "thread/started");
    expect(c.received.indexOf(announced)).toBeGreaterThan(c.received.findIndex((m) => m.result?.thread?.id === threadId));
    expect(c.notifications("thread/started").map((m) => m.params.thread.id)).toEqual([threadId]);
    const before = c.received.length;
    const { turnId, completed, messages } = await c.turn(threadId, "/think weighing it\n/bash echo from-bash\nHello");
    const afterStart = c.received.slice(before);
    expect(afterStart[0]).toMatchObject({ id: expect.any(Number), result: { turn: { id: turnId, status: "inProgress", items: [] } } });
    const methods = messages.map((m) => m.method);
    expect(methods[0]).toBe("turn/started");
    expect(methods.at(-1)).toBe("turn/completed");
    expect(methods.filter((m) => m === "turn/completed")).toHaveLength(1);
    expect(completed.params.turn).toMatchObject({ id: turnId, status: "completed", error: null });

    // Items never interleave: each started item completes before the next starts.
    const lifecycle = messages.filter((m) => m.method === "item/started" || m.method === "item/completed").map((m) => `${m.method}:${m.params.item.type}`);
    expect(lifecycle).toEqual([
      "item/started:userMessage",
      "item/completed:userMessage",
      "item/started:reasoning",
      "item/completed:reasoning",
      "item/started:commandExecution",
      "item/completed:commandExecution",
      "item/started:agentMessage",
      "item/completed:agentMessage",
    ]);
    const [reasoning] = completedItems(messages, "reasoning");
    expect(reasoning.summary).toEqual(["weighing it"]);
    expect(messages.filter((m) => m.method === "item/reasoning/summaryTextDelta").map((m) => m.params.delta).join("")).toBe("weighing it");
    const [command] = completedItems(messages, "commandExecution");
    expect(command).toMatchObject({ command: "echo from-bash", cwd: suite.gateway.cwd, status: "completed", exitCode: 0, aggregatedOutput: "from-bash\n" });
    expect(messages.filter((m) => m.method === "item/commandExecution/outputDelta").map((m) => m.params.delta).join("")).toBe("from-bash\n");
    const deltas = messages.filter((m) => m.method === "item/agentMessage/delta").map((m) => m.params.delta).join("");
    expect(agentText(messages)).toBe(deltas);
    expect(deltas).toContain("You said: Hello");
    const usage = messages.find((m) => m.method === "thread/tokenUsage/updated");
    expect(usage?.params.tokenUsage.last.outputTokens).toBeGreaterThan(0);
    expect(c.notifications("thread/status/changed").map((m) => m.params.status.type).slice(-2)).toEqual(["active", "idle"]);
  });

  it("reports a failed turn with an error and turn/completed failed", async () => {
    const c = await client();
    const threadId = await started(c);
    const { completed, messages } = await c.turn(threadId, "/fail the model broke");
    expect(completed.params.turn).toMatchObject({ status: "failed", error: { message: "the model broke" } });
    const error = messages.find((m) => m.method === "error");
    expect(error?.params).toMatchObject({ willRetry: false, error: { message: "the model broke" } });
    expect(messages.indexOf(error!)).toBeLessThan(messages.indexOf(completed));
  });

  it("interrupts a running turn: {} first, then turn/completed interrupted", async () => {
    const c = await client();
    const threadId = await started(c);
    const { turn } = await c.request("turn/start", { threadId, input: [{ type: "text", text: "/sleep 20000\nlate" }] });
    await c.waitFor((m) => m.method === "turn/started" && m.params.turn.id === turn.id);
    const wrong = await rpcError(c.request("turn/interrupt", { threadId, turnId: "another" }));
    expect(wrong.code).toBe(-32600);
    const index = c.received.length;
    expect(await c.request("turn/interrupt", { threadId, turnId: turn.id })).toEqual({});
    const completed = await c.turnCompleted(turn.id);
    expect(completed.params.turn.status).toBe("interrupted");
    expect(c.received.indexOf(completed)).toBeGreaterThan(index);
    expect(await rpcError(c.request("turn/interrupt", { threadId, turnId: turn.id }))).toMatchObject({ message: "-32600: no active turn to interrupt" });
  });

  it("steers a running turn; turn/start during a turn returns that turn", async () => {
    const c = await client();
    const threadId = await started(c);
    const { turn } = await c.request("turn/start", { threadId, input: [{ type: "text", text: "/sleep 1500\nfirst" }] });
    await c.waitFor((m) => m.method === "turn/started" && m.params.turn.id === turn.id);
    expect(await rpcError(c.request("turn/steer", { threadId, expectedTurnId: "other", input: [{ type: "text", text: "x" }] }))).toMatchObject({ code: -32600 });
    expect(await c.request("turn/steer", { threadId, expectedTurnId: turn.id, input: [{ type: "text", text: "steered" }] })).toEqual({ turnId: turn.id });
    const again = await c.request("turn/start", { threadId, input: [{ type: "text", text: "second" }] });
    expect(again.turn.id).toBe(turn.id);
    await c.turnCompleted(turn.id);
    expect(c.notifications("turn/started").filter((m) => m.params.turn.id === turn.id)).toHaveLength(1);
    // Steering that arrives as the turn ends continues in a turn of its own (Tau's rule); wait until every turn has ended.
    await c.waitFor(() => c.notifications("turn/started").length === c.notifications("turn/completed").length && c.notifications("thread/status/changed").at(-1)?.params.status.type === "idle");
    expect(await rpcError(c.request("turn/steer", { threadId, expectedTurnId: turn.id, input: [{ type: "text", text: "x" }] }))).toMatchObject({ message: "-32600: no active turn to steer" });
  });
});

describe("approvals of the gateway's command tools", () => {
  const approvalTurn = async (decision: unknown, policy = "on-request") => {
    const c = await client();
    const threadId = await started(c, { approvalPolicy: policy });
    c.onRequest("item/commandExecution/requestApproval", () => ({ decision }));
    return { c, threadId, ...(await c.turn(threadId, '/tool echo-args {"a":7}\nDone')) };
  };

  it("accept: the command item waits for the decision, then runs; serverRequest/resolved follows the answer", async () => {
    const { c, threadId, messages } = await approvalTurn("accept");
    const [request] = c.serverRequests("item/commandExecution/requestApproval");
    const [item] = completedItems(messages, "commandExecution");
    expect(request!.params).toMatchObject({ threadId, itemId: item.id, command: expect.stringContaining("cat <<< "), availableDecisions: ["accept", "acceptForSession", "decline", "cancel"] });
    expect(item).toMatchObject({ status: "completed", aggregatedOutput: '{"a":7}', exitCode: 0 });
    const started = messages.findIndex((m) => m.method === "item/started" && m.params.item.id === item.id);
    const requestAt = c.received.indexOf(request!);
    const resolved = c.received.findIndex((m) => m.method === "serverRequest/resolved" && m.params.requestId === request!.id);
    expect(c.received.indexOf(messages[started]!)).toBeLessThan(requestAt);
    expect(resolved).toBeGreaterThan(requestAt);
    expect(c.received.indexOf(messages.find((m) => m.method === "item/completed" && m.params.item.id === item.id)!)).toBeGreaterThan(resolved);
    expect(c.notifications("thread/status/changed").map((m) => m.params.status.activeFlags)).toContainEqual(["waitingOnApproval"]);
  });

  it("decline: the item is declined and the turn goes on", async () => {
    const { completed, messages } = await approvalTurn("decline");
    expect(completedItems(messages, "commandExecution")[0]).toMatchObject({ status: "declined" });
    expect(completed.params.turn.status).toBe("completed");
    expect(agentText(messages)).toContain("rejected by the user");
  });

  it("cancel: the item is declined and the turn is interrupted", async () => {
    const { c, threadId } = await (async () => {
      const c = await client();
      const threadId = await started(c);
      c.onRequest("item/commandExecution/requestApproval", () => ({ decision: "cancel" }));
      return { c, threadId };
    })();
    const { completed, messages } = await c.turn(threadId, '/tool echo-args {"a":1}\n/sleep 20000\nnever');
    expect(completedItems(messages, "commandExecution")[0]).toMatchObject({ status: "declined" });
    expect(completed.params.turn.status).toBe("interrupted");
  });

  it("cancel: the interrupt reaches Tau before the decline, so nothing the agent would say after the call is said", async () => {
    const c = await client();
    const threadId = await started(c);
    c.onRequest("item/commandExecution/requestApproval", () => ({ decision: "cancel" }));
    const { completed, messages } = await c.turn(threadId, '/tool echo-args {"a":1}\nsaid after the call');
    expect(completed.params.turn.status).toBe("interrupted");
    expect(agentText(messages)).not.toContain("said after the call");
  });

  it("acceptForSession: later calls run without asking; approvalPolicy never asks nothing", async () => {
    const { c, threadId } = await approvalTurn("acceptForSession");
    await c.turn(threadId, '/tool echo-args {"a":2}');
    expect(c.serverRequests("item/commandExecution/requestApproval")).toHaveLength(1);

    const never = await client();
    const neverThread = await started(never, { approvalPolicy: "never" });
    const { messages } = await never.turn(neverThread, '/tool echo-args {"a":3}');
    expect(never.serverRequests()).toEqual([]);
    expect(completedItems(messages, "commandExecution")[0]).toMatchObject({ status: "completed", aggregatedOutput: '{"a":3}' });
  });
});

describe("questions and dynamic tools", () => {
  it("ask_user becomes item/tool/requestUserInput; the answer is the tool's result", async () => {
    const c = await client();
    const threadId = await started(c);
    c.onRequest("item/tool/requestUserInput", (params) => ({ answers: { [params.questions[0].id]: { answers: ["Blue"] } } }));
    const { messages } = await c.turn(threadId, '/tool ask_user {"question":"Pick a colour","options":["Red","Blue"]}');
    const [request] = c.serverRequests("item/tool/requestUserInput");
    expect(request!.params.questions[0]).toMatchObject({ question: "Pick a colour", options: [{ label: "Red" }, { label: "Blue" }] });
    expect(agentText(messages)).toContain("Blue");
    expect(c.notifications("serverRequest/resolved").map((m) => m.params.requestId)).toContain(request!.id);
  });

  it("an answer that leaves the question out declines it, as Codex answers a dismissed question: the tool fails with why", async () => {
    const c = await client();
    const threadId = await started(c);
    c.onRequest("item/tool/requestUserInput", () => ({ answers: {} }));
    const { messages } = await c.turn(threadId, '/tool ask_user {"question":"Pick a colour"}');
    expect(c.serverRequests("item/tool/requestUserInput")).toHaveLength(1);
    expect(agentText(messages)).toContain("Tool ask_user failed: the user did not answer: the user gave no answer");
  });

  it("dynamic tools become Tau client tools called through item/tool/call", async () => {
    const c = await client();
    const threadId = await started(c, {
      dynamicTools: [
        { type: "function", name: "lookup_price", description: "Looks up a price.", inputSchema: { type: "object", properties: { sku: { type: "string" } }, required: ["sku"] } },
        { type: "namespace", name: "codex_tui", description: "the terminal UI's own", tools: [] },
      ],
    });
    c.onRequest("item/tool/call", (params) => ({ contentItems: [{ type: "inputText", text: `price of ${params.arguments.sku}: 42` }], success: true }));
    const { messages } = await c.turn(threadId, '/tool lookup_price {"sku":"A-1"}');
    const [call] = c.serverRequests("item/tool/call");
    const [item] = completedItems(messages, "dynamicToolCall");
    expect(call!.params).toMatchObject({ threadId, tool: "lookup_price", arguments: { sku: "A-1" }, callId: item.id });
    expect(item).toMatchObject({ status: "completed", success: true, contentItems: [{ type: "inputText", text: "price of A-1: 42" }] });
    expect(agentText(messages)).toContain("price of A-1: 42");
  });

  it("a proposed plan is a plan item and a turn/plan/updated checklist, approved through a question", async () => {
    const c = await client();
    const threadId = await started(c);
    c.onRequest("item/tool/requestUserInput", (params) => ({ answers: { [params.questions[0].id]: { answers: ["Approve"] } } }));
    const { messages } = await c.turn(threadId, '/tool submit_plan {"plan":"- read the code\\n- [x] write the test"}');
    expect(completedItems(messages, "plan")).toEqual([{ type: "plan", id: expect.any(String), text: "- read the code\n- [x] write the test" }]);
    expect(messages.find((m) => m.method === "turn/plan/updated")?.params.plan).toEqual([
      { step: "read the code", status: "pending" },
      { step: "write the test", status: "completed" },
    ]);
    expect(agentText(messages)).toContain("approved the plan");
    // The thread waits on user input while the plan is put to the client, as for a question, and no longer once it is decided.
    const statuses = c.notifications("thread/status/changed").filter((m) => m.params.threadId === threadId);
    expect(statuses.map((m) => m.params.status.activeFlags ?? m.params.status.type)).toEqual([[], ["waitingOnUserInput"], [], "idle"]);
    const waiting = statuses.find((m) => m.params.status.activeFlags?.includes("waitingOnUserInput"));
    expect(c.received.indexOf(waiting!)).toBeLessThan(c.received.findIndex((m) => m.method === "item/tool/requestUserInput"));
  });

  it("a tool Tau runs that is neither a command nor the client's is an mcpToolCall of server tau", async () => {
    const c = await client();
    const threadId = await started(c);
    const { messages } = await c.turn(threadId, "/tool no_such_tool {}");
    expect(completedItems(messages, "mcpToolCall")).toEqual([
      expect.objectContaining({ server: "tau", tool: "no_such_tool", status: "failed", error: { message: expect.stringContaining("unknown tool") } }),
    ]);
  });

  it("refuses a dynamic tool that takes another tool's name, naming the field", async () => {
    const c = await client();
    await c.initialize();
    const error = await rpcError(c.request("thread/start", { dynamicTools: [{ type: "function", name: "bash", description: "x", inputSchema: { type: "object" } }] }));
    expect(error).toMatchObject({ code: -32602 });
    expect(error.message).toContain("dynamicTools[0].name");
  });
});

describe("threads across connections", () => {
  it("resumes a thread from another connection with its history as turns and items; lists threads", async () => {
    const first = await client();
    const threadId = await started(first);
    await first.turn(threadId, "/bash echo one\nHello");

    const second = await client();
    await second.initialize();
    const resumed = await second.request("thread/resume", { threadId });
    expect(resumed.thread.id).toBe(threadId);
    const [turn] = resumed.thread.turns;
    expect(turn.status).toBe("completed");
    expect(turn.items.map((i: { type: string }) => i.type)).toEqual(["userMessage", "commandExecution", "agentMessage"]);
    expect(turn.items[1]).toMatchObject({ command: "echo one", status: "completed" });
    expect((await second.request("thread/resume", { threadId, excludeTurns: true })).thread.turns).toEqual([]);
    expect((await second.request("thread/loaded/list", {})).data).toEqual([threadId]);
    expect((await second.request("thread/read", { threadId })).thread.turns).toEqual([]);
    const listed = await second.request("thread/list", { limit: 100 });
    expect(listed.data.map((t: { id: string }) => t.id)).toContain(threadId);

    // The second connection now gets the thread's notifications too.
    const { turnId } = await first.turn(threadId, "again");
    await second.turnCompleted(turnId);
  });
});
