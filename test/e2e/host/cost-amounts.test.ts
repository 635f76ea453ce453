import { tmpdir } from "node:os";
import { describe, expect, it } from "vitest";
import { RawAcpClient } from "../../support/acp-raw-client.js";
import { openSession, runTurn } from "../../support/ask-events.js";
import { cleanupsAfterEach } from "../../support/cleanups.js";
import { startTestGateway } from "../../support/gateway.js";

/**
 * Costs reach clients as the decimal amounts their dialects carry, without the noise of summing
 * binary floats. The scripted agent charges 0.000001 per word: "one two three four" is 4 words in
 * and 6 out ("You said: one two three four"), which as floats sum to 0.000009999999999999999.
 */

const cleanups = cleanupsAfterEach();
const PROMPT = "one two three four";

describe("cost amounts", () => {
  it("Ask turn.completed.cost and ACP usage_update.cost.amount are 0.00001, not 0.000009999999999999999", async () => {
    expect(4 * 1e-6 + 6 * 1e-6, "the sum as floats").not.toBe(0.00001);
    const gw = await cleanups.stopAfterTest(startTestGateway());

    const ask = await gw.client();
    const sessionId = await openSession(ask);
    const { terminal } = await runTurn(ask, sessionId, PROMPT);
    expect(terminal.type).toBe("turn.completed");
    expect(JSON.stringify((terminal.payload as { cost: number }).cost)).toBe("0.00001");

    const acp = await RawAcpClient.connect(gw.acpUrl);
    cleanups.push(() => acp.close());
    await acp.initialize();
    const created = await acp.request("session/new", { cwd: tmpdir(), mcpServers: [] });
    const prompted = await acp.request("session/prompt", { sessionId: created.result.sessionId, prompt: [{ type: "text", text: PROMPT }] });
    expect(prompted.result.stopReason).toBe("end_turn");
    const usage = await acp.next((m) => m.method === "session/update" && m.params.update.sessionUpdate === "usage_update");
    expect(JSON.stringify(usage.params.update.cost)).toBe('{"amount":0.00001,"currency":"USD"}');
  });
});
