import { realpathSync } from "node:fs";
import { tmpdir } from "node:os";
import { describe, expect, it } from "vitest";
import { AskTestClient } from "../../support/ask-client.js";
import { spawnAcpAgent } from "../../support/acp-process.js";
import { cleanupsAfterEach } from "../../support/cleanups.js";
import { docBlock } from "../../support/docs.js";
import { readyServe } from "../../support/relayed-clients.js";

/**
 * The editor settings the README and the docs show for Zed run as written: the agent command
 * with its arguments and environment, spawned as Zed spawns it, against the gateway of the
 * README's examples (`ws://127.0.0.1:8080` put in for the test's address; started with the
 * token the settings send), relays to it, and the editor's session is the gateway's, listed to
 * its other clients.
 */

const cleanups = cleanupsAfterEach();

const pages: Array<[string, () => string]> = [
  ["README.md", () => docBlock("README.md", "{\n  \"agent_servers\"")],
  ["docs/acp.md", () => docBlock("docs/acp.md", "{\n  \"agent_servers\"")],
  ["docs/remote.md", () => docBlock("docs/remote.md", "{\n  \"agent_servers\"")],
];

interface AgentServer {
  command: string;
  args: string[];
  env?: Record<string, string>;
}

describe("the documented Zed settings", () => {
  for (const [page, settingsBlock] of pages) {
    it(`${page}: the agent relays to the running gateway and shares its sessions`, { timeout: 60_000 }, async () => {
      const tau = (JSON.parse(settingsBlock()) as { agent_servers: Record<string, AgentServer> }).agent_servers.Tau!;
      expect(tau.command).toBe("tau-gateway");
      expect(tau.args[0]).toBe("acp");
      expect(tau.args, "it relays (--remote), so the editor shares the gateway's sessions").toContain("--remote");
      const token = tau.env?.TAU_GATEWAY_REMOTE_TOKEN;
      const gateway = await readyServe(["--port", "0", ...(token ? ["--token", token] : [])], cleanups);
      const ws = gateway.baseUrl.replace("http://", "ws://");

      const editor = spawnAcpAgent(tau.args.slice(1).map((arg) => arg.replace("ws://127.0.0.1:8080", ws)), cleanups, tau.env ?? {});
      editor.write({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: 1, clientCapabilities: {} } });
      await editor.next((m) => m.id === 1);
      editor.write({ jsonrpc: "2.0", id: 2, method: "session/new", params: { cwd: realpathSync(tmpdir()), mcpServers: [] } });
      const created = await editor.next((m) => m.id === 2);
      expect(created.result, JSON.stringify(created)).toMatchObject({ sessionId: expect.any(String) });

      const phone = await AskTestClient.websocket(`${ws}/rpc${token ? `?access_token=${token}` : ""}`);
      cleanups.push(() => phone.socket.close());
      const { sessions } = await phone.request("session/list", {});
      expect((sessions as Array<{ sessionId: string }>).map((s) => s.sessionId)).toContain(created.result.sessionId);
    });
  }
});
