import { describe, expect, it } from "vitest";
import { MAX_DYNAMIC_TOOLS, MAX_TOOL_SCHEMA_NODES } from "../../../src/codex/dynamic-tool-bounds.js";
import { MAX_JSON_MEMBERS } from "../../../src/shared/json-bounds.js";
import { completedItems, rpcError } from "../../support/codex-client.js";
import { codexSuite } from "../../support/codex-suite.js";
import { worstStallMs } from "../../support/loop-stall.js";

/**
 * A Codex client's dynamic tools cost the gateway bounded work: their count and each schema's
 * size are refused past their bounds before any work, schemas are checked (never compiled) one per
 * event-loop turn, and a client's `pattern` is never run by the gateway. The gateway runs in this
 * process; an event-loop-delay monitor measures the worst stall while it answers.
 */

const suite = codexSuite([]);
/** Schemas of the old sizes took seconds (2,000 tools: 29 s; 20,000 properties: 5.5 s). */
const STALL_BOUND_MS = 1_000;

const tool = (name: string, inputSchema: object) => ({ type: "function", name, description: "a tool", inputSchema });
const properties = (count: number) => ({ type: "object", properties: Object.fromEntries(Array.from({ length: count }, (_, i) => [`p${i}`, { type: "string" }])) });

describe("dynamic tool bounds", () => {
  it("refuses more tools than the bound, and a schema larger than the bound, naming the field", async () => {
    const c = await suite.client();
    await c.initialize({ experimentalApi: true });
    const { result, stallMs } = await worstStallMs(async () => ({
      many: await rpcError(c.request("thread/start", { dynamicTools: Array.from({ length: 1_000 }, (_, i) => tool(`t${i}`, { type: "object" })) })),
      large: await rpcError(c.request("thread/start", { dynamicTools: [tool("big", properties(2_000))] })),
      // Past the message's own bound on members (json-bounds.ts), refused before it is parsed.
      larger: await rpcError(c.request("thread/start", { dynamicTools: [tool("bigger", properties(20_000))] })),
    }));
    expect(result.many).toMatchObject({ code: -32602 });
    expect(result.many.message).toContain(`dynamicTools: 1000 tools are more than the ${MAX_DYNAMIC_TOOLS} the gateway takes`);
    expect(result.large).toMatchObject({ code: -32602 });
    expect(result.large.message).toContain(`dynamicTools[0].inputSchema: holds more than the ${MAX_TOOL_SCHEMA_NODES} objects and arrays`);
    expect(result.larger).toMatchObject({ code: -32600, data: { limit: MAX_JSON_MEMBERS } });
    expect(result.larger.message).toContain(`more than ${MAX_JSON_MEMBERS} object members`);
    expect(stallMs).toBeLessThan(STALL_BOUND_MS);
  }, 60_000);

  it("takes the most and the largest tools the bounds allow without holding the event loop", async () => {
    const c = await suite.client();
    // The test client checks what it receives against Codex's schema, compiling a method's check on first use: not while measured.
    await suite.startedThread(c);
    // A property's schema is one node, besides the schema and its `properties`. The message's own
    // bound on members (json-bounds.ts: two a property) leaves room for 4 of the largest among the 128.
    const largest = properties(MAX_TOOL_SCHEMA_NODES - 2);
    const tools = Array.from({ length: MAX_DYNAMIC_TOOLS }, (_, i) => tool(`t${i}`, i < 4 ? { ...largest, title: `tool ${i}` } : { type: "object" }));
    const { result, stallMs } = await worstStallMs(() => c.request("thread/start", { dynamicTools: tools }));
    expect(result).toMatchObject({ thread: { id: expect.any(String) } });
    expect(stallMs).toBeLessThan(STALL_BOUND_MS);
  }, 120_000);

  it("never runs a client's pattern: a catastrophic one reaches the client with its arguments, which it checks", async () => {
    const c = await suite.client();
    const threadId = await suite.startedThread(c, { dynamicTools: [tool("redos", { type: "object", properties: { s: { type: "string", pattern: "^(a+)+$" } } })] });
    c.onRequest("item/tool/call", () => ({ contentItems: [{ type: "inputText", text: "checked by the client" }], success: true }));
    const hostile = `${"a".repeat(40)}!`;
    const { result, stallMs } = await worstStallMs(() => c.turn(threadId, `/tool redos {"s":"${hostile}"}`));
    expect(c.serverRequests("item/tool/call")[0]!.params).toMatchObject({ tool: "redos", arguments: { s: hostile } });
    expect(completedItems(result.messages, "dynamicToolCall")[0]).toMatchObject({ status: "completed", success: true });
    expect(stallMs).toBeLessThan(STALL_BOUND_MS);
  }, 60_000);
});
