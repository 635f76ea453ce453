import { spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { agentMessageProblems } from "../../test/support/acp-official-schema.js";
import { outputAtExit, repoRoot, type CliResult } from "../../test/support/cli.js";

/**
 * acpx, a third-party ACP command-line client, running `tau-gateway acp` (from source, through
 * tsx) for one prompt with `exec`: its JSON output is the whole wire log, both directions. It lives
 * here rather than in the main suite because acpx's dependencies name platform packages that the
 * npm registry mirror here does not have, which `npm ci` refuses in a lockfile.
 */

const require = createRequire(import.meta.url);
const acpxCli = join(require.resolve("acpx/package.json"), "..", "dist", "cli.js");
const tsxCli = fileURLToPath(new URL("../../node_modules/tsx/dist/cli.mjs", import.meta.url));
const mainTs = fileURLToPath(new URL("../../src/cli/main.ts", import.meta.url));

const workDir = realpathSync(mkdtempSync(join(tmpdir(), "tau-gateway-acpx-")));
afterAll(() => rmSync(workDir, { recursive: true, force: true }));

function runAcpx(args: string[]): Promise<CliResult> {
  const home = join(workDir, "home");
  mkdirSync(home, { recursive: true });
  // acpx keeps its state under HOME: a fresh one per run.
  return outputAtExit(spawn(process.execPath, [acpxCli, ...args], { cwd: repoRoot, env: { ...process.env, HOME: home } }));
}

/** Which side sent each line of a wire log: agent requests and notifications by method, responses by the open request they answer. */
function splitBySender(log: any[]): { fromAgent: any[]; fromClient: any[] } {
  const AGENT_METHODS = new Set(["session/update", "session/request_permission", "elicitation/create"]);
  const openFromAgent = new Set<string>();
  const fromAgent: any[] = [];
  const fromClient: any[] = [];
  for (const message of log) {
    if (typeof message.method === "string") {
      const byAgent = AGENT_METHODS.has(message.method);
      (byAgent ? fromAgent : fromClient).push(message);
      if (byAgent && "id" in message) openFromAgent.add(JSON.stringify(message.id));
    } else if (openFromAgent.delete(JSON.stringify(message.id))) {
      fromClient.push(message);
    } else {
      fromAgent.push(message);
    }
  }
  return { fromAgent, fromClient };
}

describe("acpx exec against tau-gateway acp", () => {
  it("runs a prompt with a tool call and an approved command tool; the wire log is valid ACP", async () => {
    const toolsFile = join(workDir, "tools.json");
    writeFileSync(toolsFile, JSON.stringify({ tools: [{ name: "echo-args", description: "Prints its arguments.", parameters: { type: "object" }, command: "cat" }] }));
    const project = join(workDir, "project");
    mkdirSync(project, { recursive: true });
    const agentCommand = [process.execPath, tsxCli, mainTs, "acp", "--tools-config", toolsFile].join(" ");
    const prompt = '/bash echo hi from acpx\n/tool echo-args {"a":1}\nHello from acpx';
    const run = await runAcpx(["--agent", agentCommand, "--cwd", project, "--approve-all", "--format", "json", "exec", prompt]);
    expect(run.code, run.stderr).toBe(0);

    const log = run.stdout.split("\n").filter((line) => line.trim()).map((line) => JSON.parse(line));
    const { fromAgent, fromClient } = splitBySender(log);
    expect(fromClient.filter((m) => m.method).map((m) => m.method)).toEqual(["initialize", "session/new", "session/prompt"]);
    expect(fromClient[0].params.clientInfo).toMatchObject({ name: "acpx", version: "0.19.1" });
    expect(log.find((m) => m.method === "session/new").params.cwd).toBe(project);

    const updates = fromAgent.filter((m) => m.method === "session/update").map((m) => m.params.update);
    expect(updates.find((u) => u.sessionUpdate === "tool_call" && u.name === "bash")).toMatchObject({ kind: "execute", title: "echo hi from acpx" });
    const permission = fromAgent.find((m) => m.method === "session/request_permission");
    expect(permission.params.options.map((o: any) => o.kind)).toEqual(["allow_once", "allow_always", "reject_once", "reject_always"]);
    // --approve-all picks allow_once; the command tool then ran.
    expect(fromClient.find((m) => m.id === permission.id && "result" in m).result).toEqual({ outcome: { outcome: "selected", optionId: "allow_once" } });
    const text = updates.filter((u) => u.sessionUpdate === "agent_message_chunk").map((u) => u.content.text).join("");
    expect(text).toBe('You said: Hello from acpx\nTool bash returned: hi from acpx\nTool echo-args returned: {"a":1}');
    const promptId = fromClient.find((m) => m.method === "session/prompt").id;
    expect(log.at(-1)).toEqual({ jsonrpc: "2.0", id: promptId, result: { stopReason: "end_turn" } });
    expect(agentMessageProblems(fromAgent, fromClient)).toEqual([]);
  }, 120_000);
});
