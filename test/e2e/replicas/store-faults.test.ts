import { describe, expect, it } from "vitest";
import { terminalOf, waitForTerminal } from "../../support/ask-events.js";
import { cleanupsAfterEach } from "../../support/cleanups.js";
import { startReplicaSet, until } from "../../support/replica-set.js";
import { expectEachTurnOnce, expectStoreUnavailable, follow, turnReached } from "../../support/store-fault-clients.js";
import { startTcpProxy } from "../../support/tcp-proxy.js";

/**
 * Faults of the shared store, every part a real process: two replicas on one Redis, the second
 * reaching it through a TCP proxy the test black-holes mid-session, with Ask, Codex and ACP clients
 * following the session through it. The cut-off replica stops
 * pretending (not ready at once, requests answered promptly with a retryable error that names the
 * store, never the store library's words), and once the link heals its subscribers catch up from
 * the shared log: every turn that ran meanwhile ends exactly once for them, with no gap.
 */

const cleanups = cleanupsAfterEach();

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
      // Ask, Codex and ACP clients follow the same session through the replica that will be cut off.
      const cutOffFollowers = await follow(set, cutOff, sessionId, cleanups);
      const turns: Array<{ turnId: string; content: string }> = [];
      const send = async (content: string) => {
        const sent = await driver.request("session/send", { sessionId, content });
        turns.push({ turnId: sent.turnId, content });
        return sent;
      };
      const first = await send("before the cut");
      await turnReached(cutOffFollowers, sessionId, first.turnId, "before the cut");

      proxy.blackhole();
      // Not ready, as soon as it has tried the store once.
      await until(async () => (await fetch(`${cutOff.baseUrl}/readyz`)).status === 503 || undefined, "the cut-off replica to turn unready");
      // Answered at once, in each dialect's shape, never in the store library's words.
      await expectStoreUnavailable(cutOffFollowers);

      // Turns run on the owner meanwhile.
      const during = [await send("during the cut, one")];
      await waitForTerminal(driver, sessionId, during[0].turnId);
      during.push(await send("during the cut, two"));
      await waitForTerminal(driver, sessionId, during[1].turnId);

      proxy.heal();
      for (const { turnId } of during) await turnReached(cutOffFollowers, sessionId, turnId, turns.find((t) => t.turnId === turnId)!.content);
      await until(async () => (await fetch(`${cutOff.baseUrl}/readyz`)).status === 200 || undefined, "the replica to be ready again");

      expectEachTurnOnce(cutOffFollowers, sessionId, turns);
      for (const { turnId } of [first, ...during]) expect(terminalOf(cutOffFollowers.ask.eventsOf(sessionId), turnId) ?? terminalOf(driver.eventsOf(sessionId), turnId)).toBeDefined();
    },
    120_000,
  );
});
