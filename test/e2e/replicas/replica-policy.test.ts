import * as acp from "@agentclientprotocol/sdk";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AcpSdkEditor } from "../../support/acp-sdk-editor.js";
import { Cleanups } from "../../support/cleanups.js";
import type { ServingCli } from "../../support/cli.js";
import { agentText, CodexTestClient, completedItems } from "../../support/codex-client.js";
import { ECHO_TOOL } from "../../support/echo-tool.js";
import { leasesOwned, startReplicaSet } from "../../support/replica-set.js";

/**
 * The approval policy on two replicas sharing a real redis-server, every part a real process: the
 * clients are on B, which does not own the Tau host (A holds the calls and applies the policy). A
 * denied call is refused with its rule in what B's Codex and ACP clients see, nobody asked; a call a
 * `require` rule matches is offered once-only choices on B as on A (the decision is bound to its
 * call), and the same tool called again with a changed argument is asked about again.
 */

const POLICY = `version: replica-policy-1
rules:
  - name: no-sevens
    match: { tool: echo-json, arguments: { /a: "7" } }
    action: deny
    reason: seven is reserved
  - name: every-echo
    match: { tool: echo-json }
    action: require
`;
const REFUSAL = 'denied by the approval policy, rule "no-sevens" (/rules/0): seven is reserved';
const DENIED = '/tool echo-json {"a":7}\nDone';
const TWO_CALLS = '/tool echo-json {"a":5}\n/tool echo-json {"a":6}\nDone';
const TEST_TIMEOUT = 120_000;
const APPROVAL = "item/commandExecution/requestApproval";

const cleanups = new Cleanups();
const dir = mkdtempSync(join(tmpdir(), "tau-gateway-replica-policy-"));
let b: ServingCli;

beforeAll(async () => {
  const tools = join(dir, "tools.json");
  const policy = join(dir, "policy.yaml");
  writeFileSync(tools, JSON.stringify({ tools: [ECHO_TOOL] }));
  writeFileSync(policy, POLICY);
  const set = await startReplicaSet(cleanups, { replicas: 2, serveArgs: ["--tools-config", tools, "--approval-policy", policy] });
  const [a] = set.replicas as [ServingCli, ServingCli];
  b = set.replicas[1]!;
  expect([await leasesOwned(a), await leasesOwned(b)]).toEqual([1, 0]);
}, TEST_TIMEOUT);

afterAll(async () => {
  await cleanups.runNewestFirst();
  rmSync(dir, { recursive: true, force: true });
});

const wsUrl = (path: string) => `${b.baseUrl.replace("http://", "ws://")}${path}`;

async function codexOnB(): Promise<CodexTestClient & { socket: import("ws").WebSocket }> {
  const client = await CodexTestClient.websocket(wsUrl(""));
  cleanups.push(() => client.socket.terminate());
  await client.initialize();
  return client;
}

function editorOnB(): AcpSdkEditor {
  const editor = AcpSdkEditor.open(wsUrl("/acp"), {});
  cleanups.push(() => editor.close());
  return editor;
}

describe("the approval policy with clients on a replica that does not own the Tau host", () => {
  it(
    "Codex: a denied call is refused with its rule and nobody is asked; a required call is offered once-only decisions, and the changed call is asked again",
    async () => {
      const codex = await codexOnB();
      codex.onRequest(APPROVAL, () => ({ decision: "acceptForSession" }));
      const { thread } = await codex.request("thread/start", { approvalPolicy: "on-request" });
      const denied = await codex.turn(thread.id, DENIED);
      expect(codex.serverRequests(APPROVAL)).toEqual([]);
      expect(agentText(denied.messages)).toContain(`Tool echo-json failed: ${REFUSAL}`);

      const required = await codex.turn(thread.id, TWO_CALLS);
      expect(codex.serverRequests(APPROVAL).map((r) => r.params.availableDecisions)).toEqual([
        ["accept", "decline", "cancel"],
        ["accept", "decline", "cancel"],
      ]);
      expect(completedItems(required.messages, "commandExecution").map((item) => [item.status, item.aggregatedOutput])).toEqual([
        ["completed", '{"a":5}'],
        ["completed", '{"a":6}'],
      ]);
      expect(codex.invalid).toEqual([]);
    },
    TEST_TIMEOUT,
  );

  it(
    "ACP (the official SDK client): a denied call is refused with its rule and nobody is asked; a required call is offered allow once and reject once, and the changed call is asked again",
    async () => {
      const editor = editorOnB();
      await editor.agent.request(acp.methods.agent.initialize, { protocolVersion: acp.PROTOCOL_VERSION });
      const { sessionId } = await editor.agent.request(acp.methods.agent.session.new, { cwd: dir, mcpServers: [] });
      const prompt = (text: string) => editor.agent.request(acp.methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text }] });

      expect((await prompt(DENIED)).stopReason).toBe("end_turn");
      const said = editor.updates.flatMap(({ update }) => (update.sessionUpdate === "agent_message_chunk" && update.content.type === "text" ? [update.content.text] : [])).join("");
      expect(said).toContain(`Tool echo-json failed: ${REFUSAL}`);

      // Asked in order: had the denied call been put to the editor, the first request would be its.
      const prompted = prompt(TWO_CALLS);
      for (const a of [5, 6]) {
        const asked = await editor.permission();
        expect([asked.params.toolCall.rawInput, asked.params.options.map((o) => o.kind)]).toEqual([{ a }, ["allow_once", "reject_once"]]);
        asked.answer({ outcome: { outcome: "selected", optionId: "allow_once" } });
      }
      expect((await prompted).stopReason).toBe("end_turn");
    },
    TEST_TIMEOUT,
  );
});
