import { describe, expect, it } from "vitest";
import type { Event } from "../../generated/ask-v1.0.js";
import { RpcError } from "../support/ask-client.js";
import { expectOneTerminalPerTurn, terminalOf, waitForTerminal } from "../support/ask-events.js";
import { cleanupsAfterEach } from "../support/cleanups.js";
import { CodexTestClient } from "../support/codex-client.js";
import { startReplicaSet, until } from "../support/replica-set.js";
import { startTcpProxy } from "../support/tcp-proxy.js";

/**
 * Faults of the shared store, every part a real process: two replicas on one Redis, the second
 * reaching it through a TCP proxy the test black-holes mid-session. The cut-off replica stops
 * pretending (not ready at once, requests answered promptly with a retryable error that names the
 * store, never the store library's words), and once the link heals its subscribers catch up from
 * the shared log: every turn that ran meanwhile ends exactly once for them, with no gap.
 */

const cleanups = cleanupsAfterEach();

/** Events of a subscription seen across a possible reset: after a `session.reset`, seqs start over. */
function expectNoGapOrDuplicate(events: readonly Event[]): void {
  let previous: number | undefined;
  for (const event of events) {
    if (previous !== undefined && event.type !== "session.reset") expect(event.seq, `event after seq ${previous}`).toBe(previous + 1);
    previous = event.seq;
  }
}

describe("a replica cut off from the store", () => {
  it(
    "answers at once with a retryable store error, is not ready, and its subscribers catch up once the link heals",
    async () => {
      const set = await startReplicaSet(cleanups, { replicas: 1 });
      const proxy = await startTcpProxy({ host: "127.0.0.1", port: set.redis.port }, cleanups);
      const owner = set.replicas[0]!;
      const cutOff = await set.addReplica({ storeUrl: `redis://127.0.0.1:${proxy.port}` });

      const driver = await set.client(owner);
      await driver.request("initialize", { client: { name: "driver", version: "1" } });
      const { session } = await driver.request("session/create", {});
      const sessionId = session.sessionId as string;
      await driver.request("session/subscribe", { sessionId });
      const watcher = await set.client(cutOff);
      await watcher.request("initialize", { client: { name: "watcher", version: "1" } });
      await watcher.request("session/subscribe", { sessionId });
      // A Codex client follows the same session, as a thread, through the replica that will be cut off.
      const codex = await CodexTestClient.websocket(cutOff.baseUrl.replace("http://", "ws://"));
      cleanups.push(() => codex.socket.terminate());
      await codex.initialize();
      await codex.request("thread/resume", { threadId: sessionId });
      const first = await driver.request("session/send", { sessionId, content: "before the cut" });
      await waitForTerminal(watcher, sessionId, first.turnId);
      await codex.turnCompleted(first.turnId);

      proxy.blackhole();
      // Not ready, as soon as it has tried the store once.
      await until(async () => (await fetch(`${cutOff.baseUrl}/readyz`)).status === 503 || undefined, "the cut-off replica to turn unready");
      const failure = await watcher.request("session/list", {}).then(
        () => undefined,
        (error: unknown) => error,
      );
      expect(failure).toBeInstanceOf(RpcError);
      expect((failure as RpcError).code).toBe(-32012);
      expect((failure as RpcError).message).toMatch(/store unavailable/);
      expect((failure as RpcError).message).not.toMatch(/maxRetriesPerRequest|Command timed out|ioredis/i);
      const codexFailure = await codex.request("thread/list", {}).then(
        () => undefined,
        (error: unknown) => error as RpcError,
      );
      expect(codexFailure?.code).toBe(-32012);
      expect(codexFailure?.message).toMatch(/store unavailable/);

      // Turns run on the owner meanwhile.
      const during = [await driver.request("session/send", { sessionId, content: "during the cut, one" })];
      await waitForTerminal(driver, sessionId, during[0].turnId);
      during.push(await driver.request("session/send", { sessionId, content: "during the cut, two" }));
      await waitForTerminal(driver, sessionId, during[1].turnId);

      proxy.heal();
      for (const { turnId } of during) await waitForTerminal(watcher, sessionId, turnId);
      for (const { turnId } of during) await codex.turnCompleted(turnId, 30_000);
      await until(async () => (await fetch(`${cutOff.baseUrl}/readyz`)).status === 200 || undefined, "the replica to be ready again");

      const events = watcher.eventsOf(sessionId);
      expectNoGapOrDuplicate(events);
      const lastReset = events.map((e) => e.type).lastIndexOf("session.reset");
      expectOneTerminalPerTurn(events.slice(lastReset + 1));
      for (const { turnId } of [first, ...during]) expect(terminalOf(events, turnId) ?? terminalOf(driver.eventsOf(sessionId), turnId)).toBeDefined();
      for (const { turnId } of [first, ...during]) expect(codex.notifications("turn/completed").filter((m) => m.params.turn.id === turnId)).toHaveLength(1);
      expect(codex.invalid).toEqual([]);
    },
    120_000,
  );
});
