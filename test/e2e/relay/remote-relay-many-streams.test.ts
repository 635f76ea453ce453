import { describe, expect, it } from "vitest";
import { AskTestClient } from "../../support/ask-client.js";
import { expectContiguous, waitForTerminal } from "../../support/ask-events.js";
import { cleanupsAfterEach } from "../../support/cleanups.js";
import { spawnLineChild } from "../../support/line-child.js";
import { gatewayBehindProxy } from "../../support/relay-faults.js";

/**
 * A relay whose client follows more sessions than the gateway lets one connection have requests in
 * flight (`--max-inflight`, 64 by default; 4 here): on a new link every stream is resumed, none
 * refused as overloaded and silently left behind.
 */

const cleanups = cleanupsAfterEach();
const SESSIONS = 40;

describe("a relay following many sessions", () => {
  it(
    "stdio --remote, on a gateway that lets 4 requests be in flight: after its connection is cut, every one of 40 subscribed sessions streams on",
    async () => {
      const link = await gatewayBehindProxy(cleanups, ["--max-inflight", "4"]);
      let terminal!: AskTestClient;
      const relay = spawnLineChild(["stdio", "--remote", link.remote], cleanups, (line) => terminal.receive(line));
      terminal = new AskTestClient(relay.write);
      await terminal.request("initialize", { client: { name: "ask-terminal", version: "1" } });
      const sessionIds: string[] = [];
      for (let i = 0; i < SESSIONS; i++) {
        const { session } = await terminal.request("session/create", {});
        sessionIds.push(session.sessionId as string);
        await terminal.request("session/subscribe", { sessionId: session.sessionId });
      }
      // A turn on the first session shows when the relay is on its new link with the streams resumed.
      const first = sessionIds[0]!;
      const before = await terminal.request("session/send", { sessionId: first, content: "before the cut" });
      await waitForTerminal(terminal, first, before.turnId);

      link.proxy.drop();
      // Every stream goes on: a turn in each of the last sessions (those resumed last) reaches the terminal.
      for (const sessionId of sessionIds.slice(-8)) {
        const { turnId } = await terminal.request("session/send", { sessionId, content: `after the cut in ${sessionId}` });
        expect(await waitForTerminal(terminal, sessionId, turnId)).toMatchObject({ type: "turn.completed", payload: { response: `You said: after the cut in ${sessionId}` } });
        expectContiguous(terminal.eventsOf(sessionId));
      }
      expect(link.proxy.connections).toBeGreaterThanOrEqual(2);

      relay.end();
      expect(await relay.exit).toEqual({ code: 0, signal: null });
      expect(terminal.invalid).toEqual([]);
    },
    120_000,
  );
});
