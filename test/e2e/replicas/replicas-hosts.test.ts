import { describe, expect, it } from "vitest";
import { expectContiguous, waitForTerminal } from "../../support/ask-events.js";
import { cleanupsAfterEach } from "../../support/cleanups.js";
import { SseTestClient } from "../../support/sse-client.js";
import { TauTestClient, resultOf } from "../../support/tau-client.js";
import { leasesOwned, startReplicaSet, until } from "../../support/replica-set.js";

/**
 * Replicas and several Tau hosts together, every part a real process: two gateway replicas on one
 * Redis in front of two Tau hosts. Each host has its own lease; sessions created through one
 * replica are spread over the hosts and found through the other (the placement is in the store);
 * a turn sent through either replica reaches every subscriber; an SSE client resumes on the other
 * replica after its Last-Event-ID.
 */

const cleanups = cleanupsAfterEach();

async function sessionsOn(hostUrl: string): Promise<string[]> {
  const tau = await TauTestClient.connect(hostUrl, "count");
  try {
    resultOf(await tau.initialize());
    const listed = resultOf(await tau.request("session.list", {})) as { sessions: Array<{ sessionId: string }> };
    return listed.sessions.map((s) => s.sessionId);
  } finally {
    tau.close();
  }
}

describe("replicas in front of two Tau hosts", () => {
  it(
    "spreads sessions over the hosts, finds each through either replica, and streams its turns to subscribers on both; SSE resumes across replicas",
    async () => {
      const set = await startReplicaSet(cleanups, { replicas: 2, hosts: 2 });
      const [a, b] = set.replicas as [typeof set.replicas[0], typeof set.replicas[0]];
      // One lease per host, both on the replica that started first.
      expect([await leasesOwned(a), await leasesOwned(b)]).toEqual([2, 0]);

      const onA = await set.client(a);
      await onA.request("initialize", { client: { name: "replicas-hosts", version: "1" } });
      const created: string[] = [];
      for (let i = 0; i < 4; i++) created.push(((await onA.request("session/create", {})) as { session: { sessionId: string } }).session.sessionId);
      const [first, second] = await Promise.all(set.hostUrls.map(sessionsOn));
      // Spread: two on each host (least loaded first), none on both.
      expect(first!.filter((id) => created.includes(id))).toHaveLength(2);
      expect(second!.filter((id) => created.includes(id))).toHaveLength(2);

      const onB = await set.client(b);
      await onB.request("initialize", { client: { name: "replicas-hosts", version: "1" } });
      // Replica B lists every session A created and serves a turn on each, read through both replicas.
      const listed = (await onB.request("session/list", { limit: 100 })) as { sessions: Array<{ sessionId: string }> };
      expect(listed.sessions.map((s) => s.sessionId).sort()).toEqual([...created].sort());
      for (const sessionId of created) {
        await onA.request("session/subscribe", { sessionId });
        await onB.request("session/subscribe", { sessionId });
        const { turnId } = (await onB.request("session/send", { sessionId, content: `hello ${sessionId}` })) as { turnId: string };
        await waitForTerminal(onB, sessionId, turnId);
        await waitForTerminal(onA, sessionId, turnId);
        expectContiguous(onA.eventsOf(sessionId));
        expect(onB.eventsOf(sessionId).map((e) => e.seq)).toEqual(onA.eventsOf(sessionId).map((e) => e.seq));
      }

      // SSE: read part of a session's events through A, resume on B after the last one seen.
      const sessionId = created[0]!;
      const all = onA.eventsOf(sessionId);
      const cut = all[Math.floor(all.length / 2)]!.seq;
      const resumed = await SseTestClient.open(`${b.baseUrl}/rpc/events?sessionId=${encodeURIComponent(sessionId)}`, { headers: { "last-event-id": String(cut) } });
      cleanups.push(() => resumed.close());
      expect(resumed.status).toBe(200);
      await resumed.waitFor(() => resumed.eventCount() >= all.length - (all.findIndex((e) => e.seq === cut) + 1), "the events after the cursor");
      expect(resumed.events().map((f) => f.event.seq)).toEqual(all.filter((e) => e.seq > cut).map((e) => e.seq));
      await until(async () => ((await leasesOwned(a)) === 2 ? true : undefined), "the leases to stay put");
    },
    180_000,
  );
});
