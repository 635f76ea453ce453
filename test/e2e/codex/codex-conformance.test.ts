import { describe, expect, it } from "vitest";
import type { CommandToolConfig } from "../../../src/bridge/interactions/index.js";
import { completedItems, rpcError, type CodexMessage, type CodexTestClient } from "../../support/codex-client.js";
import { codexSuite } from "../../support/codex-suite.js";

/**
 * Details of the Codex app-server dialect where the gateway follows what the real `codex
 * app-server` 0.169.0 was recorded doing (shared spec, codex-app-server-v2.md): the refusal of a
 * client name that cannot be a header, the order of a declined command's completion and the
 * thread's status, and no serverRequest/resolved after an answered dynamic tool call. Every
 * message is also checked against the official schema.
 */

const echoArgs: CommandToolConfig = {
  name: "echo-args",
  description: "Prints the JSON arguments it was given.",
  parameters: { type: "object" },
  command: "cat",
};

const suite = codexSuite([echoArgs]);
const client = () => suite.client();
const started = (c: CodexTestClient, params: Record<string, unknown> = {}) => suite.startedThread(c, params);

/** Index of the first message (from `from` on) that `predicate` picks, in everything the client received. */
const indexOf = (c: CodexTestClient, predicate: (m: CodexMessage) => boolean, from = 0) => c.received.findIndex((m, i) => i >= from && predicate(m));

describe("initialize", () => {
  it("refuses a client name that cannot be an HTTP header value with -32600, and stays uninitialized", async () => {
    const c = await client();
    for (const name of ["bad\rname", "bad\nname", "nul\u0000"]) {
      expect(await rpcError(c.request("initialize", { clientInfo: { name, version: "1" } }))).toMatchObject({
        code: -32600,
        message: `-32600: Invalid clientInfo.name: '${name}'. Must be a valid HTTP header value.`,
      });
    }
    expect(await rpcError(c.request("thread/loaded/list", {}))).toMatchObject({ code: -32600, message: "-32600: Not initialized" });
    expect((await c.request("initialize", { clientInfo: { name: "tab\tand spaces: fine", version: "1" } })).userAgent).toMatch(/^tau-gateway\//);
  });

  it("answers an initialize without a usable clientInfo with -32602 naming it, never an internal error, and stays uninitialized", async () => {
    const c = await client();
    for (const params of [{}, { clientInfo: "codex" }, { clientInfo: { version: "1" } }]) {
      const error = await rpcError(c.request("initialize", params));
      expect(error, JSON.stringify(params)).toMatchObject({ code: -32602, message: expect.stringContaining("clientInfo") });
    }
    expect(await rpcError(c.request("thread/loaded/list", {}))).toMatchObject({ code: -32600, message: "-32600: Not initialized" });
  });
});

describe("a declined command", () => {
  it("completes as declined before the thread stops waiting on its approval", async () => {
    const c = await client();
    const threadId = await started(c, { approvalPolicy: "on-request" });
    c.onRequest("item/commandExecution/requestApproval", () => ({ decision: "decline" }));
    const { messages } = await c.turn(threadId, '/tool echo-args {"a":1}\nDone');
    const [item] = completedItems(messages, "commandExecution");
    expect(item).toMatchObject({ status: "declined" });
    const request = indexOf(c, (m) => m.method === "item/commandExecution/requestApproval");
    const completed = indexOf(c, (m) => m.method === "item/completed" && m.params.item.id === item.id);
    const waitEnds = indexOf(c, (m) => m.method === "thread/status/changed" && m.params.status.type === "active" && m.params.status.activeFlags.length === 0, request);
    expect(request).toBeGreaterThan(0);
    expect(completed).toBeGreaterThan(request);
    expect(waitEnds).toBeGreaterThan(completed);
  });

  it("an accepted one still stops the wait before its output, as before", async () => {
    const c = await client();
    const threadId = await started(c, { approvalPolicy: "on-request" });
    c.onRequest("item/commandExecution/requestApproval", () => ({ decision: "accept" }));
    await c.turn(threadId, '/tool echo-args {"a":2}');
    const request = indexOf(c, (m) => m.method === "item/commandExecution/requestApproval");
    const waitEnds = indexOf(c, (m) => m.method === "thread/status/changed" && m.params.status.type === "active" && m.params.status.activeFlags.length === 0, request);
    const output = indexOf(c, (m) => m.method === "item/commandExecution/outputDelta", request);
    expect(waitEnds).toBeGreaterThan(request);
    expect(output).toBeGreaterThan(waitEnds);
  });
});

describe("a dynamic tool call", () => {
  it("is not followed by serverRequest/resolved once the client has answered it", async () => {
    const c = await client();
    const threadId = await started(c, {
      dynamicTools: [{ type: "function", name: "lookup_price", description: "Looks up a price.", inputSchema: { type: "object" } }],
    });
    c.onRequest("item/tool/call", () => ({ contentItems: [{ type: "inputText", text: "42" }], success: true }));
    const { messages } = await c.turn(threadId, '/tool lookup_price {"sku":"A-1"}');
    const [call] = c.serverRequests("item/tool/call");
    expect(completedItems(messages, "dynamicToolCall")[0]).toMatchObject({ status: "completed", success: true });
    expect(c.notifications("serverRequest/resolved").filter((m) => m.params.requestId === call!.id)).toEqual([]);
  });
});

describe("an interrupt while a server request waits", () => {
  it("answers {}, completes the turn interrupted, and only then resolves the request", async () => {
    const c = await client();
    const threadId = await started(c, { approvalPolicy: "on-request" });
    // The approval is never answered: the interrupt must settle it.
    const { turn } = await c.request("turn/start", { threadId, input: [{ type: "text", text: '/tool echo-args {"a":3}' }] });
    const request = await c.waitFor((m) => m.method === "item/commandExecution/requestApproval");
    expect(await c.request("turn/interrupt", { threadId, turnId: turn.id })).toEqual({});
    const resolved = await c.waitFor((m) => m.method === "serverRequest/resolved" && m.params.requestId === request.id);
    const completed = await c.turnCompleted(turn.id);
    expect(completed.params.turn.status).toBe("interrupted");
    expect(c.received.indexOf(resolved)).toBeGreaterThan(c.received.indexOf(completed));
    expect(resolved.params).toEqual({ threadId, requestId: request.id });
  });
});

describe("experimental fields", () => {
  it("are refused with -32600 naming them to a connection without the capability, and taken from one with it", async () => {
    const plain = await client();
    await plain.initialize(null);
    const { thread } = await plain.request("thread/start", { cwd: suite.gateway.cwd });
    expect(await rpcError(plain.request("turn/start", { threadId: thread.id, input: [{ type: "text", text: "hi" }], collaborationMode: { mode: "plan", settings: { model: "m" } } }))).toMatchObject({
      code: -32600,
      message: "-32600: turn/start.collaborationMode requires experimentalApi capability",
    });
    expect(await rpcError(plain.request("thread/list", { parentThreadId: thread.id }))).toMatchObject({ code: -32600, message: "-32600: thread/list.parentThreadId requires experimentalApi capability" });
    expect(await rpcError(plain.request("thread/resume", { threadId: thread.id, path: "/tmp/rollout.jsonl" }))).toMatchObject({ code: -32600, message: "-32600: thread/resume.path requires experimentalApi capability" });
    // null is no value, as Codex reads it.
    expect((await plain.request("thread/list", { parentThreadId: null })).data).toEqual(expect.any(Array));

    const opted = await client();
    await opted.initialize({ experimentalApi: true });
    expect((await opted.request("thread/list", { parentThreadId: thread.id })).data).toEqual(expect.any(Array));
  });
});

describe("a turn as it is announced and reported", () => {
  it("runs notLoaded as its own root, started at a time, and completes with its last agent message as the summary", async () => {
    const c = await client();
    const threadId = await started(c);
    const { turn } = await c.request("turn/start", { threadId, input: [{ type: "text", text: "Summarise me", text_elements: [] }] });
    expect(turn).toMatchObject({ id: turn.id, rootTurnId: turn.id, items: [], itemsView: "notLoaded", status: "inProgress" });
    const completed = await c.turnCompleted(turn.id);
    const announced = c.received.find((m) => m.method === "turn/started" && m.params.turn.id === turn.id)!;
    expect(announced.params.turn).toMatchObject({ rootTurnId: turn.id, itemsView: "notLoaded", startedAt: expect.any(Number) });
    const [reply] = completedItems(c.turnMessages(turn.id), "agentMessage");
    expect(completed.params.turn).toMatchObject({ rootTurnId: turn.id, itemsView: "summary", items: [reply], status: "completed" });
    const read = await c.request("thread/read", { threadId, includeTurns: true });
    expect(read.thread.turns.at(-1)).toMatchObject({ id: turn.id, rootTurnId: turn.id, itemsView: "full" });
  });

  it("reports no summary for a turn that wrote no message", async () => {
    const c = await client();
    const threadId = await started(c);
    const { completed } = await c.turn(threadId, "/fail nothing to say");
    expect(completed.params.turn).toMatchObject({ items: [], itemsView: "notLoaded", status: "failed" });
  });
});
