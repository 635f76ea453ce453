import { afterEach, describe, expect, it, vi } from "vitest";
import type { BridgeCore } from "../../src/bridge/bridge-core.js";
import { CodexSurface, type CodexPeer } from "../../src/codex/codex-surface.js";
import { dynamicToolsOverBounds, MAX_DYNAMIC_TOOLS, MAX_TOOL_SCHEMA_NODES } from "../../src/codex/dynamic-tool-bounds.js";
import { ProtocolValidators } from "../../src/validation/validator.js";

/**
 * thread/start's dynamic tools are refused past their bounds from the params as received, before
 * the Codex surface validates them: the validator walks every tool, so a refused request must
 * never reach it.
 */

const tool = (name: string, inputSchema: unknown) => ({ type: "function", name, description: "a tool", inputSchema });
const tools = (count: number) => Array.from({ length: count }, (_, i) => tool(`t${i}`, { type: "object" }));
const properties = (count: number) => ({ type: "object", properties: Object.fromEntries(Array.from({ length: count }, (_, i) => [`p${i}`, { type: "string" }])) });

/** A Codex surface whose calls stop before any thread is made: nothing past the validator is reached by these params. */
function surface(): CodexSurface {
  const core = { commandTools: [], reverse: { add: () => undefined }, hosts: {} } as unknown as BridgeCore;
  return new CodexSurface({ core, defaultCwd: "/", serverVersion: "0.0.0", toolConnection: () => Promise.reject(new Error("no connections here")) as never });
}
const peer = { client: { initialized: true, experimentalApi: true } } as unknown as CodexPeer;

afterEach(() => vi.restoreAllMocks());

describe("dynamic tool bounds before validation", () => {
  it("refuses too many tools and too large a schema, naming the field", () => {
    expect(dynamicToolsOverBounds({ dynamicTools: tools(MAX_DYNAMIC_TOOLS + 1) })?.message).toBe(
      `invalid params: dynamicTools: ${MAX_DYNAMIC_TOOLS + 1} tools are more than the ${MAX_DYNAMIC_TOOLS} the gateway takes`,
    );
    const large = dynamicToolsOverBounds({ dynamicTools: [tool("small", { type: "object" }), tool("big", properties(MAX_TOOL_SCHEMA_NODES))] });
    expect(large?.message).toBe(`invalid params: dynamicTools[1].inputSchema: holds more than the ${MAX_TOOL_SCHEMA_NODES} objects and arrays the gateway takes in one tool's schema`);
  });

  it("lets through what is within the bounds and leaves params of another shape to the validator", () => {
    expect(dynamicToolsOverBounds({ dynamicTools: tools(MAX_DYNAMIC_TOOLS) })).toBeUndefined();
    expect(dynamicToolsOverBounds({ dynamicTools: [tool("largest", properties(MAX_TOOL_SCHEMA_NODES - 2))] })).toBeUndefined();
    for (const params of [undefined, null, "text", [], {}, { dynamicTools: null }, { dynamicTools: "x" }, { dynamicTools: [null, 3, tool("s", "not a schema")] }]) {
      expect(dynamicToolsOverBounds(params)).toBeUndefined();
    }
  });

  it("refuses an over-bound thread/start without running the params validator", async () => {
    const validate = vi.spyOn(ProtocolValidators.shared().get("codex"), "params");
    const codex = surface();
    await expect(codex.call(peer, "thread/start", { dynamicTools: tools(2_000) })).rejects.toMatchObject({
      code: -32602,
      message: `invalid params: dynamicTools: 2000 tools are more than the ${MAX_DYNAMIC_TOOLS} the gateway takes`,
    });
    await expect(codex.call(peer, "thread/start", { dynamicTools: [tool("big", properties(20_000))] })).rejects.toMatchObject({
      code: -32602,
      message: expect.stringContaining("dynamicTools[0].inputSchema: holds more than"),
    });
    expect(validate).not.toHaveBeenCalled();
    // Params within the bounds are validated as before: this one's tool lacks its name.
    await expect(codex.call(peer, "thread/start", { dynamicTools: [{ type: "function", description: "x", inputSchema: {} }] })).rejects.toMatchObject({ code: -32602 });
    expect(validate).toHaveBeenCalledWith("thread/start", expect.anything());
  });
});
