import { describe, expect, it } from "vitest";
import { AskTestClient } from "../../support/ask-client.js";
import { cleanupsAfterEach } from "../../support/cleanups.js";
import { docBlock } from "../../support/docs.js";
import { sdkClient, stdioTransport } from "../../support/mcp-client.js";
import { readyServe } from "../../support/relayed-clients.js";

/**
 * The MCP host configuration docs/mcp.md shows runs as written: its command and arguments,
 * spawned as a host spawns an MCP server, relay to the running gateway of the docs' examples
 * (`ws://127.0.0.1:8080` put in for the test's address), the tools are listed, and a session the
 * host starts is the gateway's, listed to its other clients.
 */

const cleanups = cleanupsAfterEach();

interface McpServer {
  command: string;
  args: string[];
}

describe("the documented MCP host configuration", () => {
  it("docs/mcp.md: the server relays to the running gateway and shares its sessions", { timeout: 60_000 }, async () => {
    const tau = (JSON.parse(docBlock("docs/mcp.md", '{ "mcpServers"')) as { mcpServers: Record<string, McpServer> }).mcpServers.tau!;
    expect(tau.command).toBe("tau-gateway");
    expect(tau.args[0]).toBe("mcp");
    expect(tau.args, "it relays (--remote), so the host shares the gateway's sessions").toContain("--remote");
    const gateway = await readyServe(["--port", "0"], cleanups);
    const ws = gateway.baseUrl.replace("http://", "ws://");

    const transport = stdioTransport(tau.args.slice(1).map((arg) => arg.replace("ws://127.0.0.1:8080", ws)));
    const host = sdkClient();
    await host.connect(transport);
    cleanups.push(() => host.close());
    const { tools } = await host.listTools();
    expect(tools.length).toBeGreaterThan(0);
    const started = await host.callTool({ name: "tau", arguments: { prompt: "From the documented host" } });
    const sessionId = (started.structuredContent as { sessionId?: string } | undefined)?.sessionId;
    expect(sessionId, JSON.stringify(started)).toEqual(expect.any(String));

    const phone = await AskTestClient.websocket(`${ws}/rpc`);
    cleanups.push(() => phone.socket.close());
    const { sessions } = await phone.request("session/list", {});
    expect((sessions as Array<{ sessionId: string }>).map((s) => s.sessionId)).toContain(sessionId);
    expect(transport.problems()).toEqual([]);
  });
});
