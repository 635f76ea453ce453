import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MAX_TOOL_CONNECTIONS } from "../../../src/codex/tool-connections.js";
import { completedItems, rpcError } from "../../support/codex-client.js";
import { startTestGateway, type TestGateway } from "../../support/gateway.js";

/**
 * Threads whose client brings dynamic tools share the Tau connections that advertise them: every
 * thread with the same tools uses one connection (which observes each of their sessions), so 200
 * threads open one connection to Tau, not 200; distinct sets of tools take a connection each, at
 * most MAX_TOOL_CONNECTIONS at once, and a thread/start past it is refused in Codex's words. The
 * host is reached through a relay that counts the requests reaching it: each connection
 * initializes once.
 */

let gateway: TestGateway;
beforeAll(async () => {
  gateway = await startTestGateway({ relay: true });
});
afterAll(() => gateway.stop());

const tool = (name: string) => ({ type: "function", name, description: "echoes", inputSchema: { type: "object", properties: { s: { type: "string" } } } });
const initializes = () => gateway.relay!.count("initialize");

describe("the Tau connections of dynamic tools", () => {
  it("200 threads with the same tools share one connection, and a call still reaches the thread's own client", async () => {
    const before = initializes();
    const clients = await Promise.all([gateway.codexClient(), gateway.codexClient()]);
    for (const c of clients) await c.initialize({ experimentalApi: true });
    const threads: Array<{ client: (typeof clients)[number]; threadId: string }> = [];
    for (let i = 0; i < 200; i++) {
      const client = clients[i % 2]!;
      const { thread } = await client.request("thread/start", { cwd: gateway.cwd, dynamicTools: [tool("echo")] });
      threads.push({ client, threadId: thread.id });
    }
    expect(initializes() - before).toBe(1);

    // A call in each of two threads of different clients goes to the client of that thread.
    for (const [i, c] of clients.entries()) c.onRequest("item/tool/call", (params: any) => ({ contentItems: [{ type: "inputText", text: `client ${i}: ${params.arguments.s}` }], success: true }));
    for (const { client, threadId } of threads.slice(0, 2)) {
      const { messages } = await client.turn(threadId, '/tool echo {"s":"hi"}');
      expect(completedItems(messages, "dynamicToolCall")[0]).toMatchObject({ status: "completed", success: true });
      expect(client.serverRequests("item/tool/call").at(-1)!.params).toMatchObject({ threadId, tool: "echo" });
    }
    for (const c of clients) c.socket.close();
  }, 180_000);

  it("distinct tool sets take a connection each, up to the bound; past it thread/start is refused, and a set already open is still shared", async () => {
    const client = await gateway.codexClient();
    await client.initialize({ experimentalApi: true });
    const before = initializes();
    for (let i = 0; i < MAX_TOOL_CONNECTIONS; i++) await client.request("thread/start", { cwd: gateway.cwd, dynamicTools: [tool(`tool_${i}`)] });
    expect(initializes() - before).toBe(MAX_TOOL_CONNECTIONS);
    const refused = await rpcError(client.request("thread/start", { cwd: gateway.cwd, dynamicTools: [tool("one_too_many")] }));
    expect(refused).toMatchObject({ code: -32013, data: { limit: MAX_TOOL_CONNECTIONS } });
    expect(refused.message).toContain(`the gateway already holds ${MAX_TOOL_CONNECTIONS} connections for dynamic tools`);
    // A set already open is shared, bound or not.
    expect(await client.request("thread/start", { cwd: gateway.cwd, dynamicTools: [tool("tool_0")] })).toMatchObject({ thread: { id: expect.any(String) } });
    client.socket.close();
  }, 180_000);
});
