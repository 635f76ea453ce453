import { mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { GATEWAY_TOOL_NAMES } from "../../../src/bridge/interactions/tool-names.js";
import { parseToolsConfig } from "../../../src/bridge/interactions/index.js";
import { HOST_TOOL_NAMES } from "../../../src/registry/tau/index.js";
import { openSession, payloadsOf, waitForTerminal } from "../../support/ask-events.js";
import { cleanupsAfterEach } from "../../support/cleanups.js";
import { agentText } from "../../support/codex-client.js";
import { runCommand } from "../../support/cli.js";
import { docBlock, readDoc } from "../../support/docs.js";
import { startTestGateway } from "../../support/gateway.js";

/**
 * The command-tools page (docs/command-tools.md) is what the gateway does: its example program and
 * tools file, taken from the page, run on the embedded host with the outcomes the page shows; its list of
 * reserved names and its start-up error lines are the gateway's own.
 */

const cleanups = cleanupsAfterEach();
const EXAMPLE_DIR = "/opt/tau-tools";

const section = () => readDoc("command-tools.md");

const quotedResults = (text: string) => [...text.matchAll(/"type":"tool\.result".*?"output":("(?:[^"\\]|\\.)*")/g)].map((m) => JSON.parse(m[1]!) as string);

describe("the documented command tools", () => {
  it("the example runs as shown: approved and counted, a failing exit, arguments refused before anyone is asked", async () => {
    const dir = realpathSync(mkdtempSync(join(tmpdir(), "docs-tools-")));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    writeFileSync(join(dir, "word-count.mjs"), docBlock("docs/command-tools.md", "// Reads the tool's arguments"));
    const config = docBlock("docs/command-tools.md", "{\n  \"tools\"").replaceAll(EXAMPLE_DIR, dir);
    const tools = parseToolsConfig(config, "docs tools.json");
    expect(tools.map((t) => t.name)).toEqual(["word_count"]);

    const gw = await cleanups.stopAfterTest(startTestGateway({ commandTools: tools }));
    const client = await gw.client();
    const sessionId = await openSession(client);
    const call = async (args: unknown, approve: boolean) => {
      const mark = client.eventsOf(sessionId).length;
      const { turnId } = await client.request("session/send", { sessionId, content: `/tool word_count ${JSON.stringify(args)}` });
      if (approve) {
        const required = () => client.eventsOf(sessionId).slice(mark).find((e) => e.type === "approval.required");
        await client.waitFor(() => required() !== undefined, "approval.required");
        await client.request("interaction/approve", { sessionId, interactionId: (required()!.payload as { id: string }).id });
      }
      await waitForTerminal(client, sessionId, turnId);
      return client.eventsOf(sessionId).slice(mark);
    };

    const counted = await call({ text: "the quick brown fox" }, true);
    const empty = await call({ text: "   " }, true);
    const refused = await call({ words: 3 }, false);
    expect(refused.some((e) => e.type.startsWith("approval."))).toBe(false);
    const results = [counted, empty, refused].map((events) => payloadsOf<{ output: string; isError: boolean }>(events, "tool.result")[0]!);
    expect(results.map((r) => r.isError)).toEqual([false, true, true]);
    // The outputs the page's transcripts show, in their order.
    const transcripts = [docBlock("docs/command-tools.md", "-> {\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"session/create\""), docBlock("docs/command-tools.md", "<- {\"jsonrpc\":\"2.0\",\"method\":\"session/event\"")];
    expect(results.map((r) => r.output)).toEqual(quotedResults(transcripts.join("\n")));
    expect(client.invalid).toEqual([]);
  });

  it("names every reserved name, and shows the start-up error lines the gateway writes", async () => {
    const text = section();
    const reservedRow = text.split("\n").find((line) => line.startsWith("| `name` |"))!;
    const listed = [...reservedRow.matchAll(/`([a-z_]+)`/g)].map((m) => m[1]!).filter((name) => name !== "name");
    expect(listed.sort()).toEqual([...GATEWAY_TOOL_NAMES, ...HOST_TOOL_NAMES].sort());

    const lines = docBlock("docs/command-tools.md", "tau-gateway stdio: invalid --tools-config").split("\n");
    const dir = realpathSync(mkdtempSync(join(tmpdir(), "docs-tools-")));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    const file = join(dir, "tools.json");
    const tool = { description: "x", parameters: { type: "object" }, command: "true" };
    writeFileSync(file, JSON.stringify({ tools: [{ name: "bash", ...tool }, { name: "ask_user", ...tool }] }));
    const run = await runCommand(["stdio", "--tools-config", file]);
    expect(run.code).toBe(2);
    expect(run.stderr.trimEnd().split("\n")).toEqual(lines.map((line) => line.replaceAll("tools.json", file)));
  });
});

describe("docs/codex.md's terminal UI example", () => {
  it("its tools.json defines echo-args, and the directive it types gets the approval and the answer the page shows", async () => {
    const text = readDoc("codex.md");
    const section = text.slice(text.indexOf("### The Codex terminal UI"));
    const tools = parseToolsConfig(docBlock("docs/codex.md", "{ \"tools\": [{ \"name\": \"echo-args\""), "codex.md tools.json");
    // The page's `serve --tools-config tools.json`, on the embedded host.
    expect(section).toContain("serve --tools-config tools.json");
    const gw = await cleanups.stopAfterTest(startTestGateway({ commandTools: tools }));
    const codex = await gw.codexClient();
    cleanups.push(() => codex.socket.close());
    const asked: unknown[] = [];
    codex.onRequest("item/commandExecution/requestApproval", (params) => (asked.push(params), { decision: "accept" }));
    await codex.initialize();
    const { thread } = await codex.request("thread/start", {});
    const typed = /Typing `([^`]+)`, Ctrl-J, `([^`]+)`/.exec(section.replace(/\n/g, " "))!;
    const turn = await codex.turn(thread.id, `${typed[1]}\n${typed[2]}`);
    expect(asked).toHaveLength(1);
    const answer = /the agent's answer "(.+?)"\./.exec(section.replace(/\n/g, " "))![1]!;
    expect(answer).toBe('Tool echo-args returned: {"a":1}');
    expect(agentText(turn.messages)).toContain(answer);
  });
});
