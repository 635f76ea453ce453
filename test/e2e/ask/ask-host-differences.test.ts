import { describe, expect, it } from "vitest";
import type { Event } from "../../../generated/ask-v1.0.js";
import type { CommandToolConfig } from "../../../src/bridge/interactions/index.js";
import type { AskTestClient } from "../../support/ask-client.js";
import { expectContiguous, expectOneTerminalPerTurn, openSession, payloadsOf, waitForTerminal } from "../../support/ask-events.js";
import { describeOverAskTransports } from "../../support/ask-transports.js";
import { cleanupsAfterEach } from "../../support/cleanups.js";
import { exitWithin, spawnStdio } from "../../support/stdio-child.js";

/**
 * Where the gateway deliberately answers differently from the Ask host (ask-app-server), as the
 * page docs/differences.md lists them: each claim checked over stdio, WebSocket `/rpc`
 * and the Unix socket (and where only one transport has the thing, there).
 */

const ECHO_JSON: CommandToolConfig = { name: "echo_json", description: "Echoes its JSON arguments.", parameters: { type: "object" }, command: "cat" };
const CALL_ECHO = '/tool echo_json {"a":1}';
/** The scripted agent's reply to a long text streams in many chunks (8 characters each, 5 ms apart). */
const LONG_TEXT = "a long reply that takes a while to stream ".repeat(30).trim();

/** The answers (not notifications or reverse requests) carrying `id`. */
const answersTo = (client: AskTestClient, id: unknown) => client.received.filter((m) => (m as { id?: unknown }).id === id && !("method" in (m as object)));

/** Sends `content` and resolves with the turn id once an event of `type` of that turn's session arrived after the send. */
async function sendUntil(client: AskTestClient, sessionId: string, content: string, type: string): Promise<{ turnId: string; event: Event }> {
  const mark = client.eventsOf(sessionId).length;
  const { turnId } = await client.request("session/send", { sessionId, content });
  await client.waitFor(() => client.eventsOf(sessionId).slice(mark).some((e) => e.type === type), type);
  return { turnId, event: client.eventsOf(sessionId).slice(mark).find((e) => e.type === type)! };
}

/** The events of one turn: from its turn.started to its terminal event. */
function eventsOfTurn(events: readonly Event[], turnId: string): Event[] {
  const start = events.findIndex((e) => e.type === "turn.started" && (e.payload as { turnId: string }).turnId === turnId);
  const end = events.findIndex((e, i) => i > start && ["turn.completed", "turn.failed", "turn.aborted"].includes(e.type) && (e.payload as { turnId: string }).turnId === turnId);
  expect(start, `turn ${turnId} started`).toBeGreaterThanOrEqual(0);
  expect(end, `turn ${turnId} ended`).toBeGreaterThan(start);
  return events.slice(start, end + 1);
}

const streamedText = (events: readonly Event[]) => payloadsOf<{ delta: string }>(events, "model.streaming").map((p) => p.delta).join("");

describeOverAskTransports("differences from Ask hosts", { commandTools: [ECHO_JSON], streamDelayMs: 5 }, (transport) => {
  it("a batch, and a message that is not an object, are answered; the connection goes on (the host drops it)", async () => {
    const client = await transport().client();
    client.sendRaw(JSON.stringify([{ id: "b1", method: "ping" }, { id: "b2", method: "session/teleport" }]));
    client.sendRaw("42");
    client.sendRaw('"just a string"');
    client.sendRaw("{oops");
    expect(await client.request("ping")).toMatchObject({ status: "ok" });
    expect(answersTo(client, "b1")).toEqual([expect.objectContaining({ result: expect.objectContaining({ status: "ok" }) })]);
    expect(answersTo(client, "b2")).toEqual([expect.objectContaining({ error: expect.objectContaining({ code: -32601 }) })]);
    expect(answersTo(client, null).map((m) => (m as { error: { code: number } }).error.code)).toEqual([-32600, -32600, -32700]);
    expect(client.invalid).toEqual([]);
  });

  it("interaction/respond is answered once (the host answers it twice)", async () => {
    const client = await transport().client();
    const sessionId = await openSession(client);
    const { turnId, event } = await sendUntil(client, sessionId, '/tool ask_user {"question":"Name?"}', "input.requested");
    const interactionId = (event.payload as { id: string }).id;
    client.send({ id: "respond-1", method: "interaction/respond", params: { sessionId, interactionId, response: "Ada" } });
    // Answers come in request order: once ping's is here, any second answer to respond-1 would be too.
    await client.request("ping");
    expect(answersTo(client, "respond-1")).toEqual([expect.objectContaining({ result: { responded: true, interactionId } })]);
    expect(await waitForTerminal(client, sessionId, turnId)).toMatchObject({ type: "turn.completed" });
    client.send({ id: "respond-2", method: "interaction/respond", params: { sessionId, interactionId, response: "again" } });
    await client.request("ping");
    expect(answersTo(client, "respond-2")).toEqual([expect.objectContaining({ error: expect.objectContaining({ code: -32006 }) })]);
    expect(client.invalid).toEqual([]);
  });

  it("includeSnapshot: the missed events come once, in the result, and the notifications go on after them (the host sends them twice)", async () => {
    const client = await transport().client();
    const sessionId = await openSession(client);
    const first = await client.request("session/send", { sessionId, content: "before" });
    await waitForTerminal(client, sessionId, first.turnId);
    const missed = client.eventsOf(sessionId);

    const late = await transport().another();
    const subscribed = await late.request("session/subscribe", { sessionId, includeSnapshot: true });
    expect(subscribed.snapshot).toEqual(missed);
    const second = await client.request("session/send", { sessionId, content: "after" });
    await waitForTerminal(late, sessionId, second.turnId);
    expect(late.eventsOf(sessionId)[0]!.seq).toBe(missed.at(-1)!.seq + 1);
    expectContiguous([...subscribed.snapshot, ...late.eventsOf(sessionId)]);
    expect(late.invalid).toEqual([]);
  });

  it("each turn: one turn.started, one terminal event, and deltas that add up to its response", async () => {
    const client = await transport().client();
    const sessionId = await openSession(client);
    const first = await client.request("session/send", { sessionId, content: "/sleep 300\n/bash echo tool output\nfirst message" });
    await client.waitForEvent(sessionId, "turn.started");
    const queued = await client.request("session/send", { sessionId, content: "second message", mode: "queue" });
    await waitForTerminal(client, sessionId, queued.turnId);
    const events = client.eventsOf(sessionId);
    expectOneTerminalPerTurn(events);
    expect(payloadsOf(events, "turn.started")).toEqual([{ turnId: first.turnId }, { turnId: queued.turnId }]);
    for (const [turnId, response] of [
      [first.turnId, "You said: first message\nTool bash returned: tool output"],
      [queued.turnId, "You said: second message"],
    ]) {
      const turn = eventsOfTurn(events, turnId);
      expect(turn.at(-1)).toMatchObject({ type: "turn.completed", payload: { turnId, response } });
      expect(streamedText(turn)).toBe(response);
    }
  });

  it("session/abort ends the turn with turn.aborted after the text streamed so far (the host sends turn.completed with the partial text)", async () => {
    const client = await transport().client();
    const sessionId = await openSession(client);
    const { turnId } = await sendUntil(client, sessionId, LONG_TEXT, "model.streaming");
    expect(await client.request("session/abort", { sessionId })).toEqual({ aborted: true, sessionId });
    expect(await waitForTerminal(client, sessionId, turnId)).toMatchObject({ type: "turn.aborted", payload: { turnId } });
    const turn = eventsOfTurn(client.eventsOf(sessionId), turnId);
    expect(turn.filter((e) => e.type === "turn.completed")).toEqual([]);
    const partial = streamedText(turn);
    expect(partial.length).toBeGreaterThan(0);
    expect(`You said: ${LONG_TEXT}`.startsWith(partial)).toBe(true);
    expect(partial.length).toBeLessThan(`You said: ${LONG_TEXT}`.length);
  });

  it("expectedTurnId is compared with the running turn: its id is accepted, another is stale (the host says stale whenever a turn runs)", async () => {
    const client = await transport().client();
    const sessionId = await openSession(client);
    const running = await client.request("session/send", { sessionId, content: "/sleep 1000\nfirst" });
    await client.waitForEvent(sessionId, "turn.started");
    expect(await client.request("session/send", { sessionId, content: "not for this turn", expectedTurnId: "another-turn" })).toEqual({
      accepted: false,
      status: "stale",
      turnId: running.turnId,
    });
    expect(await client.request("session/send", { sessionId, content: "for this turn", expectedTurnId: running.turnId })).toEqual({
      accepted: true,
      status: "queued",
      turnId: running.turnId,
    });
    await client.waitFor(() => payloadsOf<{ response: string }>(client.eventsOf(sessionId), "turn.completed").some((p) => p.response === "You said: for this turn"), "the steered message's answer");
    expect(JSON.stringify(client.eventsOf(sessionId))).not.toContain("not for this turn");
  });

  it("only --tools-config command tools ask for approval; Tau's own tools run under Tau's rules, in plan mode too", async () => {
    const client = await transport().client();
    const asking = await openSession(client);
    const own = await client.request("session/send", { sessionId: asking, content: "/bash echo own tool" });
    await waitForTerminal(client, asking, own.turnId);
    expect(payloadsOf(client.eventsOf(asking), "tool.result")).toEqual([expect.objectContaining({ name: "bash", isError: false, output: "own tool\n" })]);
    expect(client.eventsOf(asking).some((e) => e.type.startsWith("approval."))).toBe(false);
    const gated = await sendUntil(client, asking, CALL_ECHO, "approval.required");
    expect(gated.event.payload).toMatchObject({ toolName: "echo_json" });
    await client.request("interaction/reject", { sessionId: asking, interactionId: (gated.event.payload as { id: string }).id });
    await waitForTerminal(client, asking, gated.turnId);

    const { session } = await client.request("session/create", { mode: "plan" });
    const planning: string = session.sessionId;
    await client.request("session/subscribe", { sessionId: planning });
    const inPlan = await client.request("session/send", { sessionId: planning, content: `/bash echo planning freely\n${CALL_ECHO}` });
    await waitForTerminal(client, planning, inPlan.turnId);
    const results = payloadsOf<{ name: string; isError: boolean; output: string }>(client.eventsOf(planning), "tool.result");
    expect(results).toEqual([
      expect.objectContaining({ name: "bash", isError: false, output: "planning freely\n" }),
      expect.objectContaining({ name: "echo_json", isError: true, output: expect.stringContaining("until a plan is approved") }),
    ]);
    expect(client.eventsOf(planning).some((e) => e.type.startsWith("approval."))).toBe(false);
    expect(client.invalid).toEqual([]);
  });
});

describe("differences from Ask hosts on stdio", () => {
  const cleanups = cleanupsAfterEach();

  it("logs go to stderr; stdout carries protocol lines only (the host logs to stdout)", async () => {
    const stdio = spawnStdio(["--log-level", "debug"], cleanups);
    const sessionId = await openSession(stdio.client);
    const { turnId } = await stdio.client.request("session/send", { sessionId, content: "/bash echo hi\nhello" });
    await waitForTerminal(stdio.client, sessionId, turnId);
    stdio.child.stdin.end();
    expect(await exitWithin(stdio.exit, 15_000)).toEqual({ code: 0, signal: null });
    expect(stdio.malformed).toEqual([]);
    for (const line of stdio.lines) expect("id" in line || line.method === "session/event", JSON.stringify(line)).toBe(true);
    const logLines = stdio.stderr().split("\n").filter((line) => line.trim());
    expect(logLines.length).toBeGreaterThan(0);
    for (const line of logLines) expect(JSON.parse(line)).toMatchObject({ component: expect.any(String), msg: expect.any(String) });
    expect(stdio.client.invalid).toEqual([]);
  });
});
