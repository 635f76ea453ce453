import { mkdirSync, realpathSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { spawnAcpAgent } from "../../support/acp-process.js";
import { cleanupsAfterEach } from "../../support/cleanups.js";
import { clientRepository, runShell, startGatewayShell } from "../../support/doc-shell.js";
import { docBlock, shellCommands } from "../../support/docs.js";

/**
 * docs/remote.md as written: the Ask terminal's relay line, and the section for editors on another
 * machine or in a container — the error an editor gets for a folder the gateway's host does not
 * have, and the container's configuration (its environment, run here without Docker: the image
 * runs in test/container/) that makes the editor's folder work and confines sessions to it. The Zed
 * settings run in docs-editor-config.test.ts, the AI SDK script in interop/test/ai-sdk-provider.test.ts.
 */

const cleanups = cleanupsAfterEach();

/** `--remote` relays an ACP editor's initialize and session/new with CWD; its answer. */
async function editorSessionNew(remote: string, cwd: string, env: NodeJS.ProcessEnv) {
  const editor = spawnAcpAgent(["--remote", remote], cleanups, env);
  editor.write({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: 1, clientCapabilities: {} } });
  await editor.next((m) => m.id === 1);
  editor.write({ jsonrpc: "2.0", id: 2, method: "session/new", params: { cwd, mcpServers: [] } });
  return editor.next((m) => m.id === 2);
}

describe("docs/remote.md", () => {
  it("an editor's folder the gateway's host lacks gets the error shown; the container's settings make it work, and only it", async () => {
    const repo = clientRepository(cleanups);
    const docker = shellCommands(docBlock("docs/remote.md", "docker run --rm -p 8080:8080 -e TAU_GATEWAY_TOKEN=change-me"))[0]!;
    // The container's environment, with the project at its path: a folder of this machine for /Users/me/project.
    const project = join(repo.dir, "Users/me/project");
    mkdirSync(project, { recursive: true });
    const env = Object.fromEntries([...docker.matchAll(/-e (\w+)=(\S+)/g)].map((m) => [m[1]!, m[2]!.replaceAll("/Users/me/project", project)]));
    expect(Object.keys(env)).toEqual(["TAU_GATEWAY_TOKEN", "TAU_GATEWAY_WORKSPACE_ROOT"]);
    expect(docker).toContain("-v /Users/me/project:/Users/me/project");
    const token = { TAU_GATEWAY_REMOTE_TOKEN: env.TAU_GATEWAY_TOKEN };

    // Before: a gateway without the project, and the editor's folder, which its machine does not have.
    const before = await startGatewayShell(repo, "tau-gateway serve --port 0", cleanups, { TAU_GATEWAY_TOKEN: env.TAU_GATEWAY_TOKEN });
    const missing = await editorSessionNew(before.baseUrl.replace("http://", "ws://"), "/Users/me/project", token);
    const shown = docBlock("docs/remote.md", "invalid params: cwd: \"/Users/me/project\" is not a directory");
    const pattern = shown.split("…").map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")).join(".+");
    expect(missing.error, JSON.stringify(missing)).toMatchObject({ code: -32602, message: expect.stringMatching(new RegExp(`^${pattern}$`)) });

    // The container's settings, the project mounted at the same path: the session starts there;
    // anywhere else is refused by the root.
    const gateway = await startGatewayShell(repo, "tau-gateway serve --port 0", cleanups, env);
    const remote = gateway.baseUrl.replace("http://", "ws://");
    expect((await editorSessionNew(remote, project, token)).result).toMatchObject({ sessionId: expect.any(String) });
    const elsewhere = await editorSessionNew(remote, realpathSync(repo.dir), token);
    expect(elsewhere.error, JSON.stringify(elsewhere)).toMatchObject({ code: -32602, message: expect.stringContaining("is outside the workspace roots") });
  });

  it("the Ask terminal's line relays the line typed to the gateway and prints its answer", async () => {
    const repo = clientRepository(cleanups);
    const [relay, typed, ...rest] = docBlock("docs/remote.md", "tau-gateway stdio --remote ws://127.0.0.1:8080").split("\n");
    expect(rest).toEqual([]);
    const token = /--remote-token (\S+)/.exec(relay!)![1]!;
    const gateway = await startGatewayShell(repo, `tau-gateway serve --port 0 --token ${token}`, cleanups);
    const run = await runShell(repo, relay!.replace("ws://127.0.0.1:8080", gateway.baseUrl.replace("http://", "ws://")), `${typed}\n`);
    expect(run.code, run.stderr).toBe(0);
    expect(JSON.parse(run.stdout)).toMatchObject({ jsonrpc: "2.0", id: 1, result: { sessions: [] } });
  });
});
