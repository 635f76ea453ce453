import { describe, expect, it } from "vitest";
import { rpcError } from "../../support/ask-client.js";
import { spawnAcpAgent } from "../../support/acp-process.js";
import { cleanupsAfterEach } from "../../support/cleanups.js";
import { askThroughRelay, codexThroughRelay, readyServe } from "../../support/relayed-clients.js";

/**
 * A client relaying (`--remote`) to a gateway on another machine, or in a container, sends a
 * working directory of its own machine. The Tau host checks it on its file system; the client gets
 * an answer that says so — the path, that it is the host's file system, what to do — in its own
 * dialect's words, not the host's bare `invalid_params`.
 */

const cleanups = cleanupsAfterEach();
const ELSEWHERE = "/Users/someone/projects/not-on-this-machine";

/** What every dialect's answer says. */
function expectClear(message: string): void {
  expect(message).toContain(JSON.stringify(ELSEWHERE));
  expect(message).toContain("The host sees its own file system");
  expect(message).toContain("docs/remote.md");
}

describe("a working directory that does not exist where the Tau host runs", () => {
  it("ACP session/new, Codex thread/start and Ask session/create through the relay: -32602 naming the field, saying why", { timeout: 60_000 }, async () => {
    const gateway = await readyServe(["--port", "0"], cleanups);
    const remote = gateway.baseUrl.replace("http://", "ws://");

    const editor = spawnAcpAgent(["--remote", remote], cleanups);
    editor.write({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: 1, clientCapabilities: {} } });
    await editor.next((m) => m.id === 1);
    editor.write({ jsonrpc: "2.0", id: 2, method: "session/new", params: { cwd: ELSEWHERE, mcpServers: [] } });
    const refused = await editor.next((m) => m.id === 2);
    expect(refused.error.code).toBe(-32602);
    expect(refused.error.message).toMatch(/^invalid params: cwd: /);
    expectClear(refused.error.message);

    const { codex } = await codexThroughRelay(remote, cleanups);
    const thread = await codex.requestRaw("thread/start", { cwd: ELSEWHERE });
    expect(thread.error.code).toBe(-32602);
    expect(thread.error.message).toContain("cwd");
    expectClear(thread.error.message);

    const { terminal } = askThroughRelay(remote, cleanups);
    const created = await rpcError(terminal.request("session/create", { workspace: { workspacePath: ELSEWHERE } }));
    expect(created.code).toBe(-32602);
    expect(created.message).toContain("workspace.workspacePath");
    expectClear(created.message);
  });
});
