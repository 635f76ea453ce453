import { existsSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { rpcError } from "../../support/ask-client.js";
import { eventually, expectContiguous, expectOneTerminalPerTurn, openSession, payloadsOf, runTurn as runTurnOf, waitForTerminal } from "../../support/ask-events.js";
import { cleanupsAfterEach } from "../../support/cleanups.js";
import { startTestGateway, type TestGateway } from "../../support/gateway.js";
import { TauTestClient, userTexts } from "../../support/tau-client.js";

/**
 * Turns over `/rpc` while one is running: steering, queueing, a stale send that must never reach
 * the host, and abort (which must end the turn with turn.aborted). session/close has its own suite
 * (ask-session-close.test.ts).
 */

const cleanups = cleanupsAfterEach();

const gateway = () => cleanups.stopAfterTest(startTestGateway());

/** A raw Tau client on the embedded host itself, to check what the gateway really sent. */
async function hostClient(gw: TestGateway): Promise<TauTestClient> {
  const client = await TauTestClient.connect(gw.host!.url);
  cleanups.push(() => client.close());
  await client.initialize();
  return client;
}

describe("session/send while a turn runs", () => {
  it("steers, queues, and refuses a stale send without sending anything upstream", async () => {
    const gw = await gateway();
    const client = await gw.client();
    const sessionId = await openSession(client);

    const first = await client.request("session/send", { sessionId, content: "/sleep 3000\nfirst" });
    expect(first).toEqual({ accepted: true, status: "steered", turnId: expect.any(String) });
    await client.waitFor(() => client.eventsOf(sessionId).some((e) => e.type === "turn.started"), "the first turn to start");

    const stale = await client.request("session/send", { sessionId, content: "stale words", expectedTurnId: "not-the-running-turn" });
    expect(stale).toEqual({ accepted: false, status: "stale", turnId: first.turnId });

    // Without mode a running turn is steered, and the status is the Ask host's word for that: queued.
    const steered = await client.request("session/send", { sessionId, content: "steer words", expectedTurnId: first.turnId });
    expect(steered).toEqual({ accepted: true, status: "queued", turnId: first.turnId });
    const queued = await client.request("session/send", { sessionId, content: "queued words", mode: "queue" });
    expect(queued).toEqual({ accepted: true, status: "queued", turnId: expect.any(String) });
    expect(queued.turnId).not.toBe(first.turnId);

    // The queued message runs as its own turn, under the turnId the send returned.
    const queuedEnd = await waitForTerminal(client, sessionId, queued.turnId);
    expect(queuedEnd).toMatchObject({ type: "turn.completed", payload: { response: "You said: queued words" } });
    const events = client.eventsOf(sessionId);
    // Steering takes over at the first safe boundary (after the pause): the first turn ends there
    // without a reply and the steered text runs as the next turn, before the queued one.
    expect(payloadsOf(events, "turn.completed").map((p) => p.response)).toEqual(["", "You said: steer words", "You said: queued words"]);
    const queueUpdates = payloadsOf<{ messages: Array<{ mode: string; text: string }> }>(events, "queue.updated");
    expect(queueUpdates.flatMap((u) => u.messages.map((m) => `${m.mode}:${m.text}`))).toEqual(expect.arrayContaining(["steer:steer words", "queue:queued words"]));
    expectContiguous(events);
    expectOneTerminalPerTurn(events);

    // The stale text never reached Tau: no event mentions it and the host's own history lacks it.
    expect(JSON.stringify(events)).not.toContain("stale words");
    const tau = await hostClient(gw);
    const texts = userTexts(await tau.snapshot(sessionId));
    expect(texts).toEqual(["/sleep 3000\nfirst", "steer words", "queued words"]);
    expect(client.invalid).toEqual([]);
  });

  it("a stale send on an idle session reports the absent turn and changes nothing", async () => {
    const gw = await gateway();
    const client = await gw.client();
    const sessionId = await openSession(client);
    expect(await client.request("session/send", { sessionId, content: "x", expectedTurnId: "t-1" })).toEqual({ accepted: false, status: "stale", turnId: null });
    expect((await client.request("session/events", { sessionId })).events.map((e: { type: string }) => e.type)).toEqual(["session.created"]);
    expect(client.invalid).toEqual([]);
  });

  it("a steer Tau refuses as busy (the turn is being interrupted) is a -32010 error, not an accepted send", async () => {
    const gw = await gateway();
    const client = await gw.client();
    const sessionId = await openSession(client);
    // The command ignores SIGTERM, so the interrupted turn stays active until the host's kill
    // grace ends with SIGKILL; the steer arrives right after the interrupt, well inside it. The
    // abort waits for the marker file: the login shell's startup is over by then, so the kill
    // cannot cut a profile script short (and SIGTERM meets the trap).
    const { turnId } = await client.request("session/send", { sessionId, content: "/bash trap '' TERM; touch started; sleep 5" });
    await eventually(() => existsSync(join(gw.cwd, "started")), "the command to start");
    const [aborted, refused] = await Promise.all([
      client.request("session/abort", { sessionId }),
      rpcError(client.request("session/send", { sessionId, content: "too late" })),
    ]);
    expect(aborted).toEqual({ aborted: true, sessionId });
    expect(refused.code).toBe(-32010);
    expect(refused.message).toContain("interrupted");
    expect(await waitForTerminal(client, sessionId, turnId)).toMatchObject({ type: "turn.aborted", payload: { turnId } });
    expect(JSON.stringify(client.eventsOf(sessionId))).not.toContain("too late");
    expectOneTerminalPerTurn(client.eventsOf(sessionId));
    expect(client.invalid).toEqual([]);
  });
});

describe("session/abort", () => {
  it("abort ends the running turn with exactly one turn.aborted; an idle abort still answers aborted:true", async () => {
    const gw = await gateway();
    const client = await gw.client();
    const sessionId = await openSession(client);
    const { turnId } = await client.request("session/send", { sessionId, content: "/sleep 20000\nnever said" });
    await client.waitFor(() => client.eventsOf(sessionId).some((e) => e.type === "turn.started"), "the turn to start");
    expect(await client.request("session/abort", { sessionId })).toEqual({ aborted: true, sessionId });
    expect(await waitForTerminal(client, sessionId, turnId)).toEqual(expect.objectContaining({ type: "turn.aborted", payload: { turnId } }));
    expect(await client.request("session/abort", { sessionId })).toEqual({ aborted: true, sessionId });

    // A steer accepted and then dropped by an abort is reported as a recoverable error event.
    const sleeping = await client.request("session/send", { sessionId, content: "/sleep 20000" });
    await client.waitFor(() => client.eventsOf(sessionId).some((e) => e.type === "turn.started" && (e.payload as { turnId: string }).turnId === sleeping.turnId), "the second turn");
    expect(await client.request("session/send", { sessionId, content: "steer me", mode: "steer" })).toMatchObject({ accepted: true, status: "steered" });
    await client.request("session/abort", { sessionId });
    expect(await waitForTerminal(client, sessionId, sleeping.turnId)).toMatchObject({ type: "turn.aborted" });
    const dropped = await client.waitForEvent(sessionId, "error");
    expect(dropped.payload).toEqual({ error: "session.steer: session was interrupted", recoverable: true });

    // The session goes on: the next turn completes.
    const next = await client.request("session/send", { sessionId, content: "after" });
    expect(await waitForTerminal(client, sessionId, next.turnId)).toMatchObject({ type: "turn.completed" });
    const events = client.eventsOf(sessionId);
    // The prompt is in the log (user.message); its reply was never said.
    expect(JSON.stringify(events.filter((e) => e.type !== "user.message"))).not.toContain("never said");
    expect(payloadsOf<{ response: string }>(events, "turn.completed").map((p) => p.response)).toEqual(["You said: after"]);
    expectContiguous(events);
    expectOneTerminalPerTurn(events);
    expect(client.invalid).toEqual([]);
  });
});

describe("session/resume", () => {
  it("reports the state of an open session; a closed one is gone (-32004), on every connection", async () => {
    const gw = await gateway();
    const client = await gw.client();
    const sessionId = await openSession(client);
    expect(await client.request("session/resume", { sessionId })).toEqual({ sessionId, running: false, idle: true, createdAt: expect.any(String) });
    const { sent } = await runTurnOf(client, sessionId, "still here");
    expect(await client.request("session/resume", { sessionId })).toMatchObject({ sessionId, running: false, idle: true });
    expect(sent.status).toBe("steered");
    await client.request("session/close", { sessionId });

    const other = await gw.client();
    for (const c of [client, other]) expect((await rpcError(c.request("session/resume", { sessionId }))).code).toBe(-32004);
    expect(client.invalid).toEqual([]);
  });
});
