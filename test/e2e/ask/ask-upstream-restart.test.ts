import { mkdtempSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { RpcError } from "../../support/ask-client.js";
import { eventually, expectContiguous, expectOneTerminalPerTurn, openSession, payloadsOf, runTurn, waitForTerminal } from "../../support/ask-events.js";
import { cleanupsAfterEach } from "../../support/cleanups.js";
import { startTestGateway } from "../../support/gateway.js";

/**
 * The Tau host restarts under the gateway mid-turn (issue 4 §4): requests during the outage fail
 * with -32012, the bridge reconnects to the host that comes back on the same port with the same
 * state directory, and each subscriber learns what happened — session.reset {cause:"resync"} and
 * the end of the turn that was cut off — so nobody waits forever. Interactions whose Tau calls
 * were lost end with events.
 */

const cleanups = cleanupsAfterEach();

describe("an upstream restart mid-turn", () => {
  it("reconnects, resyncs every session and delivers the cut-off turns' terminal events", async () => {
    const stateDir = realpathSync(mkdtempSync(join(tmpdir(), "ask-restart-")));
    cleanups.push(() => rmSync(stateDir, { recursive: true, force: true }));
    const gw = await startTestGateway({
      stateDir,
      commandTools: [{ name: "echo_json", description: "Echoes its JSON arguments.", parameters: { type: "object" }, command: "cat" }],
    });
    cleanups.push(() => gw.stop());
    const client = await gw.client();

    // Session 1: a turn sleeping in the host. Session 2: a turn waiting for an approval.
    const sleeping = await openSession(client);
    await runTurn(client, sleeping, "before the restart");
    const { turnId } = await client.request("session/send", { sessionId: sleeping, content: "/sleep 20000\ncut off" });
    const { session } = await client.request("session/create", {});
    const waiting: string = session.sessionId;
    await client.request("session/subscribe", { sessionId: waiting });
    const gated = await client.request("session/send", { sessionId: waiting, content: '/tool echo_json {"a":1}' });
    await client.waitFor(() => client.eventsOf(waiting).some((e) => e.type === "approval.required"), "the approval");
    await client.waitFor(() => client.eventsOf(sleeping).some((e) => e.type === "turn.started" && (e.payload as { turnId: string }).turnId === turnId), "the turn to start");

    await gw.stopHost();
    await eventually(() => !gw.stack.upstream!.connected, "the bridge connection to drop");
    // The lost client-tool call ends its interaction, with an event.
    await client.waitFor(() => payloadsOf(client.eventsOf(waiting), "approval.updated").length > 0, "the approval to be cancelled");
    expect(payloadsOf(client.eventsOf(waiting), "approval.updated")).toEqual([{ id: "act_1", status: "cancelled", reason: expect.any(String) }]);
    expect((await client.request("interaction/list", { sessionId: waiting })).interactions).toEqual([]);

    // Requests that need the host fail with -32012 while it is away.
    for (const [method, params] of [
      ["session/send", { sessionId: sleeping, content: "anyone?" }],
      ["session/abort", { sessionId: sleeping }],
      ["session/create", {}],
    ] as const) {
      const error = await client.request(method, params).then(
        () => undefined,
        (e: RpcError) => e,
      );
      expect(error, method).toBeInstanceOf(RpcError);
      expect(error!.code, method).toBe(-32012);
    }

    await gw.startHost();
    const reset = await client.waitForEvent(sleeping, "session.reset");
    expect(reset.payload).toMatchObject({ cause: "resync" });
    expect(await waitForTerminal(client, sleeping, turnId)).toMatchObject({ type: "turn.aborted", payload: { turnId } });
    expect(await waitForTerminal(client, waiting, gated.turnId)).toMatchObject({ type: "turn.aborted" });
    const events = client.eventsOf(sleeping);
    expect(events.findIndex((e) => e.type === "session.reset")).toBeLessThan(events.findIndex((e) => e.type === "turn.aborted"));

    // The sessions go on after the restart, in the same logs.
    const after = await runTurn(client, sleeping, "after the restart");
    expect(after.terminal).toMatchObject({ type: "turn.completed", payload: { response: "You said: after the restart" } });
    // Sends accepted before the drop did not fail: their turns' ends say what happened.
    expect(client.events.filter((e) => e.event.type === "error")).toEqual([]);
    for (const sessionId of [sleeping, waiting]) {
      expectContiguous(client.eventsOf(sessionId));
      expectOneTerminalPerTurn(client.eventsOf(sessionId));
      expect((await client.request("session/events", { sessionId })).events).toEqual(client.eventsOf(sessionId));
    }
    expect(client.invalid).toEqual([]);
  });
});
