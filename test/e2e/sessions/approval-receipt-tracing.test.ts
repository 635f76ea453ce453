import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cleanupsAfterEach } from "../../support/cleanups.js";
import { spawnOwnedCli } from "../../support/cli.js";
import { agentText, CodexTestClient } from "../../support/codex-client.js";
import { ECHO_TOOL } from "../../support/echo-tool.js";
import { startOtlpReceiver, type OtlpReceiver } from "../../support/otlp-receiver.js";

/** With tracing on, every finished receipt is exported as a span whose events are its steps. */

const cleanups = cleanupsAfterEach();
let receiver: OtlpReceiver;
const dir = mkdtempSync(join(tmpdir(), "receipt-tracing-"));
beforeAll(async () => {
  receiver = await startOtlpReceiver();
});
afterAll(async () => {
  await receiver.close();
  rmSync(dir, { recursive: true, force: true });
});

describe("receipts as spans", () => {
  it("exports a denied call's receipt with its rule, digest and steps as events", async () => {
    const tools = join(dir, "tools.json");
    const policy = join(dir, "policy.yaml");
    writeFileSync(tools, JSON.stringify({ tools: [ECHO_TOOL] }));
    writeFileSync(policy, "version: 7\nrules:\n  - { name: no-echo, match: { tool: echo-json }, action: deny }\n");
    const env = { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_SERVICE_NAME: "receipts-under-test", OTEL_BSP_SCHEDULE_DELAY: "600000", HOME: dir };
    const { child, exit } = spawnOwnedCli(["app-server", "--tools-config", tools, "--approval-policy", policy], cleanups, env);
    const codex = new CodexTestClient((line) => child.stdin!.write(`${line}\n`));
    createInterface({ input: child.stdout! }).on("line", (line) => codex.receive(line));
    await codex.initialize();
    const { thread } = await codex.request("thread/start", {});
    const { messages } = await codex.turn(thread.id, '/tool echo-json {"a":1}\nDone');
    expect(agentText(messages)).toContain('denied by the approval policy, rule "no-echo" (/rules/0)');
    child.stdin!.end();
    expect(await exit).toEqual({ code: 0, signal: null });
    const receipts = receiver.spans.filter((span) => span.name === "approval receipt" && span.service === "receipts-under-test");
    expect(receipts).toHaveLength(1);
    expect(receipts[0]!.attributes).toMatchObject({ "session.id": thread.id, "tau.tool": "echo-json", "approval.rule": "no-echo", "approval.policy_version": "7", "approval.digest": expect.stringMatching(/^sha256:/) });
    expect(receipts[0]!.events.map((event) => event.name)).toEqual(["proposed", "decided", "returned"]);
    expect(receipts[0]!.events[1]!.attributes).toMatchObject({ by: "rule", outcome: "rejected" });
  });
});
