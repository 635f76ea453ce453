import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { RawAcpClient } from "../../support/acp-raw-client.js";
import { startTestGateway, type TestGateway } from "../../support/gateway.js";
import { snapshotOnHost, userTexts } from "../../support/tau-client.js";

/**
 * A prompt's turn id (`_meta["tau-gateway/turnId"]`, which `acp --remote` sends so that a prompt
 * it repeats rejoins its turn) means something only in its own session: a prompt in another
 * session under the id of a turn still on its way to Tau runs as a prompt of its own, rather than
 * being answered by the other session's turn without its text ever reaching Tau.
 */

let gateway: TestGateway;
beforeAll(async () => {
  gateway = await startTestGateway({ host: { streamDelayMs: 15 } });
});
afterAll(() => gateway?.stop());

const TURN_ID = "0b7e0c1a-3f55-4c61-9a2d-6e8f4d2c7b10";
const LONG = Array.from({ length: 40 }, (_, i) => `word${i}`).join(" ");

describe("an ACP prompt's turn id", () => {
  it("is the session's own: the same id in another session runs that session's prompt", async () => {
    const client = await RawAcpClient.connect(gateway.acpUrl);
    await client.initialize();
    const a = (await client.request("session/new", { cwd: gateway.cwd, mcpServers: [] })).result.sessionId as string;
    const b = (await client.request("session/new", { cwd: gateway.cwd, mcpServers: [] })).result.sessionId as string;
    const first = client.request("session/prompt", { sessionId: a, prompt: [{ type: "text", text: LONG }], _meta: { "tau-gateway/turnId": TURN_ID } });
    await client.next((m) => m.method === "session/update" && m.params.sessionId === a && m.params.update.sessionUpdate === "agent_message_chunk");
    // Session a's turn is still running (its submit not answered) when b's prompt names the same id.
    const second = await client.request("session/prompt", { sessionId: b, prompt: [{ type: "text", text: "b's own" }], _meta: { "tau-gateway/turnId": TURN_ID } });
    expect(second.result).toEqual({ stopReason: "end_turn" });
    expect(userTexts(await snapshotOnHost(gateway.host!.url, b))).toEqual(["b's own"]);
    expect((await first).result).toEqual({ stopReason: "end_turn" });
    await client.close();
  }, 60_000);
});
