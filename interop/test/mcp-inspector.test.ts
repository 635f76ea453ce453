import { spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, realpathSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { outputAtExit, repoRoot, type CliResult } from "../../test/support/cli.js";
import { startServe, type ServeGateway } from "./support/gateway-servers.js";

/**
 * The MCP Inspector's command-line mode (@modelcontextprotocol/inspector, `--cli`), the MCP
 * maintainers' own client, against the gateway: over stdio it spawns `tau-gateway mcp` (from
 * source) as a host would, lists the tools (its portability check, `--strict`, finds nothing) and
 * calls them; over Streamable HTTP it reaches `serve`'s `/mcp`, and through `tau-gateway mcp
 * --remote` the same gateway's sessions.
 */

const require = createRequire(import.meta.url);
const inspectorCli = join(require.resolve("@modelcontextprotocol/inspector/package.json"), "..", "clients", "launcher", "build", "index.js");
const tsxCli = fileURLToPath(new URL("../../node_modules/tsx/dist/cli.mjs", import.meta.url));
const mainTs = fileURLToPath(new URL("../../src/cli/main.ts", import.meta.url));

const workDir = realpathSync(mkdtempSync(join(tmpdir(), "tau-gateway-mcp-inspector-")));
const home = join(workDir, "home");
mkdirSync(home, { recursive: true });
let gateway: ServeGateway | undefined;
afterAll(async () => {
  await gateway?.kill();
  rmSync(workDir, { recursive: true, force: true });
});

/** `mcp-inspector --cli ARGS`, with a HOME of its own (it keeps a catalog there). */
function inspector(args: string[]): Promise<CliResult> {
  return outputAtExit(spawn(process.execPath, [inspectorCli, "--cli", ...args], { cwd: repoRoot, env: { ...process.env, HOME: home } }));
}

/** The server command the Inspector spawns: `tau-gateway mcp ARGS` from this checkout. */
const tauGatewayMcp = (...args: string[]) => [process.execPath, tsxCli, mainTs, "mcp", ...args];

const json = (run: CliResult) => {
  expect(run.code, run.stderr).toBe(0);
  return JSON.parse(run.stdout) as Record<string, any>;
};

describe("the MCP Inspector CLI against tau-gateway", () => {
  it("lists the tools of tau-gateway mcp over stdio, every one with its input and output schema, and --strict finds no portability problem", async () => {
    const listed = json(await inspector([...tauGatewayMcp(), "--method", "tools/list"]));
    expect(listed.tools.map((t: { name: string }) => t.name)).toEqual(["tau", "tau-reply", "tau-sessions", "tau-history", "tau-interrupt"]);
    for (const tool of listed.tools) {
      expect(tool.inputSchema.type, tool.name).toBe("object");
      expect(tool.outputSchema.type, tool.name).toBe("object");
    }
    const strict = await inspector([...tauGatewayMcp(), "--method", "tools/list", "--strict"]);
    expect(strict.code, strict.stderr).toBe(0);
  });

  it("calls tau over stdio: a session's first turn, its reply and structured report", async () => {
    const called = json(await inspector([...tauGatewayMcp("--default-cwd", workDir), "--method", "tools/call", "--tool-name", "tau", "--tool-arg", "prompt=Hello from the Inspector"]));
    expect(called.isError).toBeUndefined();
    expect(called.content).toEqual([{ type: "text", text: "You said: Hello from the Inspector" }]);
    expect(called.structuredContent).toEqual(expect.objectContaining({ status: "completed", text: "You said: Hello from the Inspector", sessionId: expect.any(String) }));
  });

  it("calls the tools of serve's /mcp over Streamable HTTP, and reaches the same sessions through tau-gateway mcp --remote", async () => {
    gateway = await startServe(["--default-cwd", workDir], {});
    const url = `${gateway.url.replace("ws://", "http://")}/mcp`;
    const started = json(await inspector([url, "--transport", "http", "--method", "tools/call", "--tool-name", "tau", "--tool-arg", "prompt=Over HTTP"]));
    const { sessionId } = started.structuredContent as { sessionId: string };
    expect(started.structuredContent).toEqual(expect.objectContaining({ status: "completed", text: "You said: Over HTTP" }));

    // Another Inspector run is another MCP session: the Tau session is the gateway's, not the first run's.
    const replied = json(await inspector([url, "--transport", "http", "--method", "tools/call", "--tool-name", "tau-reply", "--tool-arg", `sessionId=${sessionId}`, "prompt=Again"]));
    expect(replied.structuredContent).toEqual(expect.objectContaining({ sessionId, text: "You said: Again" }));

    const history = json(await inspector([...tauGatewayMcp("--remote", gateway.url), "--method", "tools/call", "--tool-name", "tau-history", "--tool-arg", `sessionId=${sessionId}`]));
    expect(history.structuredContent.messages.map((m: { text: string }) => m.text)).toEqual(["Over HTTP", "You said: Over HTTP", "Again", "You said: Again"]);
    const read = json(await inspector([url, "--transport", "http", "--method", "resources/read", "--uri", `tau://session/${sessionId}`]));
    expect(read.contents[0].text).toContain("You said: Again");
  });
});
