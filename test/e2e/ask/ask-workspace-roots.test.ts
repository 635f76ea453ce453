import { mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { loadTokens } from "../../../src/cli/access-settings.js";
import { bridgeSettings, readSettings } from "../../../src/cli/settings.js";
import { TokenRegistry } from "../../../src/gateway/auth/tokens.js";
import { RawAcpClient } from "../../support/acp-raw-client.js";
import { AskTestClient, rpcError } from "../../support/ask-client.js";
import { CodexTestClient } from "../../support/codex-client.js";
import { cleanupsAfterEach } from "../../support/cleanups.js";
import { runCommand } from "../../support/cli.js";
import { startTestGateway } from "../../support/gateway.js";
import { startSecureGateway } from "../../support/secure-gateway.js";

/**
 * Workspace roots confine where Ask sessions work: `--workspace-root` (repeatable, or
 * TAU_GATEWAY_WORKSPACE_ROOT as a PATH-style list) for everyone, `workspaceRoots` in the tokens
 * file for a tenant. A working directory outside them — absolute, relative with `..`, or through a
 * symbolic link — is -32602 and no session is created. Without roots nothing is confined.
 */

const cleanups = cleanupsAfterEach();

function tempDir(prefix: string): string {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), prefix)));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

const outside = async (client: AskTestClient, workspacePath: string) => {
  const error = await rpcError(client.request("session/create", { workspace: { workspacePath } }));
  expect(error.code, workspacePath).toBe(-32602);
  expect(error.message, workspacePath).toContain("workspace.workspacePath");
  return error.message;
};

const cwdOf = async (client: AskTestClient, params: Record<string, unknown>) => {
  const { session } = await client.request("session/create", params);
  return (await client.request("workspace/readState", { sessionId: session.sessionId })).workspace.path as string;
};

describe("--workspace-root", () => {
  it("is repeatable; its variable is a :-separated list; each must be an existing directory", async () => {
    const [a, b] = [tempDir("root-a-"), tempDir("root-b-")];
    expect(readSettings(["--workspace-root", a, "--workspace-root", b], {}, bridgeSettings).workspaceRoots).toEqual([a, b]);
    expect(readSettings([], { TAU_GATEWAY_WORKSPACE_ROOT: `${a}:${b}` }, bridgeSettings).workspaceRoots).toEqual([a, b]);
    // A flag wins over the variable; neither means unconfined.
    expect(readSettings(["--workspace-root", b], { TAU_GATEWAY_WORKSPACE_ROOT: a }, bridgeSettings).workspaceRoots).toEqual([b]);
    expect(readSettings([], {}, bridgeSettings).workspaceRoots).toEqual([]);
    const missing = await runCommand(["serve", "--port", "0", "--workspace-root", join(a, "nope")]);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain(`invalid --workspace-root "${join(a, "nope")}": no such directory`);
    const help = await runCommand(["stdio", "--help"]);
    expect(help.stdout).toMatch(/--workspace-root DIR[\s\S]*TAU_GATEWAY_WORKSPACE_ROOT/);
  });

  it("confines session working directories: outside is -32602 (absolute, .., a symbolic link), inside works", async () => {
    const root = tempDir("workspace-root-");
    const elsewhere = tempDir("elsewhere-");
    mkdirSync(join(root, "project", "src"), { recursive: true });
    symlinkSync(elsewhere, join(root, "escape"));
    const gw = await cleanups.stopAfterTest(startTestGateway({ defaultCwd: join(root, "project"), workspaceRoots: [root] }));
    const client = await gw.client();
    const before = (await client.request("session/list", {})).sessions.length;

    expect(await outside(client, "/etc")).toBe(`-32602: invalid params: workspace.workspacePath: "/etc" is outside the workspace roots (${root})`);
    await outside(client, "../..");
    await outside(client, elsewhere);
    expect(await outside(client, "../escape")).toContain("through a symbolic link");
    expect((await client.request("session/list", {})).sessions).toHaveLength(before);

    expect(await cwdOf(client, {})).toBe(join(root, "project"));
    expect(await cwdOf(client, { workspace: { workspacePath: "src" } })).toBe(join(root, "project", "src"));
    expect(await cwdOf(client, { workspace: { workspacePath: ".." } })).toBe(root);
    expect(await cwdOf(client, { workspace: { workspacePath: join(root, "project") } })).toBe(join(root, "project"));
    expect(client.invalid).toEqual([]);
  });

  it("a default working directory outside the roots: sessions without a path start in the first root", async () => {
    const root = tempDir("workspace-root-");
    const gw = await cleanups.stopAfterTest(startTestGateway({ workspaceRoots: [root] }));
    const client = await gw.client();
    expect(await cwdOf(client, {})).toBe(root);
    expect(await cwdOf(client, { workspace: { workspacePath: "." } })).toBe(root);
    expect((await client.request("workspace/readState", {})).workspace.path).toBe(root);
    await outside(client, gw.cwd);
  });
});

describe("workspaceRoots in the tokens file", () => {
  it("are a tenant's own roots: the same on every entry of the tenant, absolute, existing", async () => {
    const [a, b] = [tempDir("tenant-a-"), tempDir("tenant-b-")];
    const registry = TokenRegistry.parse(
      JSON.stringify([
        { id: "a1", token: "tok-a1", tenant: "a", workspaceRoots: [a] },
        { id: "a2", token: "tok-a2", tenant: "a", workspaceRoots: [a] },
        { id: "b1", token: "tok-b1", tenant: "b" },
      ]),
      "tokens.json",
    );
    expect([...registry.tenantWorkspaceRoots()]).toEqual([["a", [a]]]);

    const refused = (entries: unknown[]) => {
      try {
        TokenRegistry.parse(JSON.stringify(entries), "tokens.json");
      } catch (err) {
        return (err as Error).message;
      }
      throw new Error("expected the tokens file to be refused");
    };
    expect(refused([{ id: "x", token: "t", tenant: "a", workspaceRoots: ["relative/dir"] }])).toBe('tokens.json: entry 0 (id "x") /workspaceRoots/0: must be an absolute path (start with /)');
    expect(refused([{ id: "x", token: "t", tenant: "a", workspaceRoots: [a] }, { id: "y", token: "u", tenant: "a", workspaceRoots: [b] }])).toBe(
      'tokens.json: entry 1 (id "y"): workspaceRoots differ from those of entry 0, of the same tenant "a"',
    );
    expect(refused([{ id: "x", token: "t", tenant: "a", workspaceRoots: [a] }, { id: "y", token: "u", tenant: "a" }])).toContain("workspaceRoots differ");

    const file = join(tempDir("tokens-"), "tokens.json");
    writeFileSync(file, JSON.stringify([{ id: "x", token: "t", tenant: "a", workspaceRoots: [join(a, "missing")] }]));
    await expect(loadTokens({ tokensFile: file, insecureNoAuth: false }, "127.0.0.1")).rejects.toThrow(
      `invalid --tokens-file ${JSON.stringify(file)}: workspace root ${JSON.stringify(join(a, "missing"))} of tenant "a": no such directory`,
    );
  });

  it("confine that tenant's sessions; a tenant without roots is unconfined", async () => {
    const rootA = tempDir("tenant-a-root-");
    const tokens = TokenRegistry.parse(
      JSON.stringify([
        { id: "a", token: "tok-a", tenant: "a", workspaceRoots: [rootA] },
        { id: "b", token: "tok-b", tenant: "b" },
      ]),
      "tokens.json",
    );
    const gw = await startSecureGateway({ tokens });
    cleanups.push(() => gw.stop());
    const connect = async (token: string) => {
      const client = await AskTestClient.websocket(gw.wsUrl("/rpc"), { headers: { authorization: `Bearer ${token}` } });
      cleanups.push(() => client.socket.terminate());
      return client;
    };
    const a = await connect("tok-a");
    const b = await connect("tok-b");

    await outside(a, gw.cwd);
    expect(await cwdOf(a, {})).toBe(rootA);
    expect(await cwdOf(b, {})).toBe(gw.cwd);
    expect(await cwdOf(b, { workspace: { workspacePath: rootA } })).toBe(rootA);
    expect([...a.invalid, ...b.invalid]).toEqual([]);
  });

  it("confine the sessions every dialect creates: a Codex thread/start and an ACP session/new outside them are -32602 naming cwd", async () => {
    const rootA = tempDir("tenant-a-root-");
    const elsewhere = tempDir("elsewhere-");
    symlinkSync(elsewhere, join(rootA, "escape"));
    const tokens = TokenRegistry.parse(JSON.stringify([{ id: "a", token: "tok-a", tenant: "a", workspaceRoots: [rootA] }]), "tokens.json");
    const gw = await startSecureGateway({ tokens });
    cleanups.push(() => gw.stop());
    const headers = { authorization: "Bearer tok-a" };
    const ask = await AskTestClient.websocket(gw.wsUrl("/rpc"), { headers });
    cleanups.push(() => ask.socket.terminate());
    const sessionsBefore = (await ask.request("session/list", {})).sessions.length;

    const codex = await CodexTestClient.websocket(gw.wsUrl("/"), headers);
    cleanups.push(() => codex.socket.terminate());
    await codex.initialize();
    const codexRefusal = async (cwd: string | undefined) => (await codex.requestRaw("thread/start", cwd === undefined ? {} : { cwd })).error;
    expect(await codexRefusal(elsewhere)).toMatchObject({ code: -32602, message: `invalid params: cwd: ${JSON.stringify(elsewhere)} is outside the workspace roots (${rootA})`, data: { field: "cwd" } });
    expect((await codexRefusal(join(rootA, "escape"))).message).toContain("through a symbolic link");
    // Inside, and without a cwd (the gateway's default lies outside: the tenant's first root).
    expect((await codex.request("thread/start", { cwd: rootA })).cwd).toBe(rootA);
    expect((await codex.request("thread/start", {})).cwd).toBe(rootA);

    const acp = await RawAcpClient.connect(gw.wsUrl("/acp"), headers);
    cleanups.push(() => acp.close());
    await acp.initialize();
    const acpNew = (cwd: string) => acp.request("session/new", { cwd, mcpServers: [] });
    expect((await acpNew(elsewhere)).error).toMatchObject({ code: -32602, message: `invalid params: cwd: ${JSON.stringify(elsewhere)} is outside the workspace roots (${rootA})` });
    expect((await acpNew(join(rootA, "escape", "sub"))).error).toMatchObject({ code: -32602 });
    expect((await acpNew(rootA)).result.sessionId).toEqual(expect.any(String));

    // Three sessions were created (two Codex threads, one ACP session), none of them outside the root.
    const sessions = (await ask.request("session/list", {})).sessions;
    expect(sessions).toHaveLength(sessionsBefore + 3);
    expect([...ask.invalid, ...codex.invalid]).toEqual([]);
  });
});
