import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { agentMessageProblems } from "../../support/acp-official-schema.js";
import { RawAcpClient } from "../../support/acp-raw-client.js";
import { expectContiguous, openSession, payloadsOf, waitForTerminal } from "../../support/ask-events.js";
import type { CodexMessage, CodexTestClient } from "../../support/codex-client.js";
import { dropConnection, startTestGateway, type TestGateway } from "../../support/gateway.js";

/**
 * A client that comes to a session while the agent is in the middle of a message — joining from
 * another dialect, or coming back after its connection dropped — gets that message once: what was
 * said so far with the session's history, the rest live, under the same message (Codex: the item it
 * was given on resume, whose item/completed carries the whole text; ACP: chunks with the same
 * messageId; Ask: the events after its cursor, each once). The reply is held mid-message in the
 * relay between the gateway and the Tau host, so the join happens there every time.
 */

let gw: TestGateway;
/** Set to hold everything the host sends after the next streamed text reaches the gateway. */
let holdAfterText = false;

const streamsText = (message: Record<string, any>) =>
  message.type === "session.delta" &&
  message.delta?.type === "snapshot.patch" &&
  (message.delta.changes as Array<Record<string, unknown>>).some((c) => c.type === "message.content.append" && typeof c.text === "string");

beforeAll(async () => {
  gw = await startTestGateway({
    relay: {
      fromHost: (message) => {
        if (holdAfterText && streamsText(message)) {
          holdAfterText = false;
          gw.relay!.hold();
        }
        return message;
      },
    },
  });
});
// A test that failed while the reply was held leaves nothing held for the next one.
afterEach(() => {
  holdAfterText = false;
  gw?.relay?.release();
});
afterAll(() => gw?.stop());

const PROMPT = "the quick brown fox jumps over the lazy dog, then walks all the way home again";
const REPLY = `You said: ${PROMPT}`;

const drop = (socket: import("ws").WebSocket) => dropConnection(gw, socket);

/** A Codex client, initialized. */
async function codexClient(): Promise<CodexTestClient & { socket: import("ws").WebSocket }> {
  const codex = await gw.codexClient();
  await codex.initialize();
  return codex;
}

/**
 * What a Codex client that resumed `threadId` mid-message was given and then got: the resumed
 * in-progress agentMessage, and the turn's messages after the response.
 */
async function resumeMidMessage(codex: CodexTestClient, threadId: string, turnId: string): Promise<{ resumed: { id: string; text: string }; live: CodexMessage[] }> {
  const from = codex.received.length;
  const { thread } = await codex.request("thread/resume", { threadId });
  const turn = thread.turns.find((t: { id: string }) => t.id === turnId);
  expect(turn?.status).toBe("inProgress");
  const messages = turn.items.filter((i: { type: string }) => i.type === "agentMessage");
  expect(messages).toHaveLength(1);
  const resumed = messages[0] as { id: string; text: string };
  // Held mid-message: some of the reply was said, not all of it.
  expect(resumed.text.length).toBeGreaterThan(0);
  expect(REPLY.startsWith(resumed.text) && resumed.text !== REPLY).toBe(true);

  gw.relay!.release();
  await codex.turnCompleted(turnId);
  const live = codex.received.slice(from).filter((m) => m.params?.turnId === turnId);
  return { resumed, live };
}

/** The resumed item continues live: its deltas, then its item/completed with the whole reply; no other agentMessage item. */
function expectContinued(resumed: { id: string; text: string }, live: CodexMessage[]): void {
  const started = live.filter((m) => m.method === "item/started" && m.params.item.type === "agentMessage");
  expect(started, "no second item for the message").toEqual([]);
  const deltas = live.filter((m) => m.method === "item/agentMessage/delta");
  expect(new Set(deltas.map((m) => m.params.itemId))).toEqual(new Set([resumed.id]));
  expect(resumed.text + deltas.map((m) => m.params.delta).join("")).toBe(REPLY);
  const completed = live.filter((m) => m.method === "item/completed" && m.params.item.type === "agentMessage").map((m) => m.params.item);
  expect(completed).toEqual([{ type: "agentMessage", id: resumed.id, text: REPLY }]);
}

describe("Codex: a client that resumes a thread mid-message", () => {
  it("joining a turn another client started continues the resumed item: same id, item/completed with the whole text", async () => {
    const ask = await gw.client();
    const sessionId = await openSession(ask);
    holdAfterText = true;
    const { turnId } = await ask.request("session/send", { sessionId, content: PROMPT });
    await ask.waitForEvent(sessionId, "model.streaming");

    const codex = await codexClient();
    const { resumed, live } = await resumeMidMessage(codex, sessionId, turnId);
    expectContinued(resumed, live);
    expect(codex.invalid).toEqual([]);
    codex.socket.terminate();
    ask.socket.terminate();
  });

  it("coming back after a drop continues the item it was streaming, under the same id, and shows the head once", async () => {
    const first = await codexClient();
    const { thread } = await first.request("thread/start", {});
    holdAfterText = true;
    const { turn } = await first.request("turn/start", { threadId: thread.id, input: [{ type: "text", text: PROMPT, text_elements: [] }] });
    const delta = await first.waitFor((m) => m.method === "item/agentMessage/delta");
    await drop(first.socket);

    const back = await codexClient();
    const { resumed, live } = await resumeMidMessage(back, thread.id, turn.id);
    expect(resumed.id).toBe(delta.params.itemId);
    expectContinued(resumed, live);
    expect(first.invalid).toEqual([]);
    expect(back.invalid).toEqual([]);
    back.socket.terminate();
  });
});

/** The text of `session/update` chunks of one kind, and the messageIds they named. */
function chunks(received: any[], kind: string): { text: string; messageIds: Array<string | undefined> } {
  const updates = received.filter((m) => m.method === "session/update" && m.params.update.sessionUpdate === kind).map((m) => m.params.update);
  return { text: updates.map((u) => u.content.text).join(""), messageIds: updates.map((u) => u.messageId) };
}

describe("ACP: an editor that loads a session mid-message", () => {
  it("gets the reply once — replayed head, then the live rest — every chunk naming the same message", async () => {
    const ask = await gw.client();
    const sessionId = await openSession(ask);
    holdAfterText = true;
    const { turnId } = await ask.request("session/send", { sessionId, content: PROMPT });
    await ask.waitForEvent(sessionId, "model.streaming");

    const acp = await RawAcpClient.connect(gw.acpUrl);
    await acp.initialize();
    expect((await acp.request("session/load", { sessionId, cwd: gw.cwd, mcpServers: [] })).error).toBeUndefined();
    const replayed = chunks(acp.received, "agent_message_chunk");
    expect(replayed.text.length).toBeGreaterThan(0);
    expect(REPLY.startsWith(replayed.text) && replayed.text !== REPLY).toBe(true);
    const [messageId] = replayed.messageIds;
    expect(messageId).toEqual(expect.any(String));

    gw.relay!.release();
    await waitForTerminal(ask, sessionId, turnId);
    await acp.next(() => chunks(acp.received, "agent_message_chunk").text.length >= REPLY.length);
    const all = chunks(acp.received, "agent_message_chunk");
    expect(all.text).toBe(REPLY);
    expect(new Set(all.messageIds)).toEqual(new Set([messageId]));
    expect(agentMessageProblems(acp.received, acp.sent)).toEqual([]);
    await acp.close();
    ask.socket.terminate();
  });

  it("coming back after a drop: the reloaded session gives the message once, under the id it was streaming with", async () => {
    const ask = await gw.client();
    const sessionId = await openSession(ask);
    const first = await RawAcpClient.connect(gw.acpUrl);
    await first.initialize();
    expect((await first.request("session/load", { sessionId, cwd: gw.cwd, mcpServers: [] })).error).toBeUndefined();
    holdAfterText = true;
    const { turnId } = await ask.request("session/send", { sessionId, content: PROMPT });
    const streaming = await first.next((m) => m.method === "session/update" && m.params.update.sessionUpdate === "agent_message_chunk");
    await drop(first.socket);

    const back = await RawAcpClient.connect(gw.acpUrl);
    await back.initialize();
    expect((await back.request("session/load", { sessionId, cwd: gw.cwd, mcpServers: [] })).error).toBeUndefined();
    const replayed = chunks(back.received, "agent_message_chunk");
    expect(REPLY.startsWith(replayed.text) && replayed.text.length > 0 && replayed.text !== REPLY).toBe(true);

    gw.relay!.release();
    await waitForTerminal(ask, sessionId, turnId);
    await back.next(() => chunks(back.received, "agent_message_chunk").text.length >= REPLY.length);
    const all = chunks(back.received, "agent_message_chunk");
    expect(all.text).toBe(REPLY);
    expect(new Set(all.messageIds)).toEqual(new Set([streaming.params.update.messageId]));
    expect(agentMessageProblems(first.received, first.sent)).toEqual([]);
    expect(agentMessageProblems(back.received, back.sent)).toEqual([]);
    await back.close();
    ask.socket.terminate();
  });
});

describe("Ask: a client that comes back mid-message with its cursor", () => {
  it("gets each event after the cursor once, the reply's chunks naming one message", async () => {
    const ask = await gw.client();
    const sessionId = await openSession(ask);
    holdAfterText = true;
    const { turnId } = await ask.request("session/send", { sessionId, content: PROMPT });
    await ask.waitForEvent(sessionId, "model.streaming");
    const before = ask.eventsOf(sessionId);
    const cursor = before.at(-1)!.seq;
    await drop(ask.socket);

    const back = await gw.client();
    await back.request("initialize", { client: { name: "phone", version: "1" } });
    await back.request("session/subscribe", { sessionId, afterSeq: cursor });
    gw.relay!.release();
    await waitForTerminal(back, sessionId, turnId);
    const after = back.eventsOf(sessionId);
    expectContiguous(after, cursor + 1);

    const streamed = [...payloadsOf<{ delta: string; messageId?: string }>(before, "model.streaming"), ...payloadsOf<{ delta: string; messageId?: string }>(after, "model.streaming")];
    expect(streamed.map((p) => p.delta).join("")).toBe(REPLY);
    const [messageId] = streamed.map((p) => p.messageId);
    expect(messageId).toEqual(expect.any(String));
    expect(streamed.filter((p) => p.messageId !== messageId)).toEqual([]);
    expect(back.invalid).toEqual([]);
    back.socket.terminate();
  });
});
