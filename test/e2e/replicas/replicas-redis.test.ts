import * as acp from "@agentclientprotocol/sdk";
import { createWebSocketStream } from "@agentclientprotocol/sdk/experimental/ws-client";
import WebSocket from "ws";
import { describe, expect, it } from "vitest";
import type { Event } from "../../../generated/ask-v1.0.js";
import { RpcError } from "../../support/ask-client.js";
import { expectContiguous, expectOneTerminalPerTurn, terminalOf, waitForTerminal } from "../../support/ask-events.js";
import { cleanupsAfterEach } from "../../support/cleanups.js";
import { agentText, CodexTestClient } from "../../support/codex-client.js";
import { repoRoot } from "../../support/cli.js";
import { leasesOwned, metric, startReplicaSet, until } from "../../support/replica-set.js";

/**
 * Gateway replicas on a shared Redis store, every part a real process: a session's events have
 * one sequence whichever replica a client reads them through; a client whose replica is killed
 * mid-turn resumes on another with its cursor and gets exactly the events after it; lost history
 * is always said, never skipped.
 */

const cleanups = cleanupsAfterEach();
const TEST_TIMEOUT = 180_000;
const LONG_REPLY = Array.from({ length: 60 }, (_, i) => `word${i}`).join(" ");

async function createSession(client: Awaited<ReturnType<Awaited<ReturnType<typeof startReplicaSet>>["client"]>>): Promise<string> {
  await client.request("initialize", { client: { name: "replicas", version: "1" } });
  const { session } = await client.request("session/create", {});
  return session.sessionId as string;
}

describe("gateway replicas on Redis", () => {
  it(
    "a client whose replica is SIGKILLed mid-turn resumes on another with its cursor: each seq once, none missing, one terminal event",
    async () => {
      const set = await startReplicaSet(cleanups, { replicas: 3 });
      const [owner, second, third] = set.replicas as [typeof set.replicas[0], typeof set.replicas[0], typeof set.replicas[0]];
      const before = await set.client(owner);
      const sessionId = await createSession(before);
      await before.request("session/subscribe", { sessionId });
      // A second client follows the same session through another replica the whole time.
      const watcher = await set.client(third);
      await watcher.request("initialize", { client: { name: "watcher", version: "1" } });
      await watcher.request("session/subscribe", { sessionId });

      const { turnId } = await before.request("session/send", { sessionId, content: `/sleep 1500\n${LONG_REPLY}` });
      await before.waitFor(() => before.eventsOf(sessionId).some((e) => e.type === "turn.started"), "the turn to start", 30_000);
      const seen = [...before.eventsOf(sessionId)];
      const cursor = seen.at(-1)!.seq;
      owner.child.kill("SIGKILL");
      await owner.exit;

      // The client comes back through another replica with its cursor.
      const after = await set.client(second);
      await after.request("initialize", { client: { name: "replicas", version: "1" } });
      await after.request("session/subscribe", { sessionId, afterSeq: cursor });
      await waitForTerminal(after, sessionId, turnId).catch(async (error: unknown) => {
        throw new Error(`${String(error)}\nsecond replica:\n${second.stderr().slice(-4000)}`);
      });
      await until(async () => ((await leasesOwned(second)) + (await leasesOwned(third)) === 1) || undefined, "one replica to own the host");

      const resumed = after.eventsOf(sessionId);
      expect(resumed[0]!.seq).toBe(cursor + 1);
      expectContiguous([...seen, ...resumed]);
      const all = [...seen, ...resumed];
      expect(all.filter((e) => terminalOf([e], turnId))).toHaveLength(1);
      expectOneTerminalPerTurn(all);
      // What the takeover reported: a resync, then the end of the turn cut off from its observer (on
      // a loaded machine the host may change hands before the kill already, so look at everything).
      expect(all.some((e) => e.type === "session.reset")).toBe(true);

      // The watcher on the third replica saw the very same sequence.
      await waitForTerminal(watcher, sessionId, turnId);
      const watched = watcher.eventsOf(sessionId);
      expectContiguous(watched);
      expect(watched.slice(0, all.length)).toEqual(all);

      // The session keeps working through the new owner, with the same sequence.
      const next = await after.request("session/send", { sessionId, content: "after the failover" });
      await waitForTerminal(after, sessionId, next.turnId);
      expectContiguous(after.eventsOf(sessionId), cursor + 1);
      expect(after.invalid).toEqual([]);
      expect(await metric(second, 'tau_gateway_resumes_total{outcome="recovered"}')).toBeGreaterThanOrEqual(1);
    },
    TEST_TIMEOUT,
  );

  it(
    "a resume while events keep flowing stays contiguous, on every replica",
    async () => {
      const set = await startReplicaSet(cleanups, { replicas: 3 });
      const [a, b, c] = set.replicas as [typeof set.replicas[0], typeof set.replicas[0], typeof set.replicas[0]];
      const driver = await set.client(b);
      const sessionId = await createSession(driver);
      await driver.request("session/subscribe", { sessionId });
      const { turnId } = await driver.request("session/send", { sessionId, content: LONG_REPLY });
      await driver.waitFor(() => driver.eventsOf(sessionId).filter((e) => e.type === "model.streaming").length >= 3, "a few chunks", 30_000);

      // Resumes through every replica from a cursor in the middle of the stream, while it streams.
      const resumers = await Promise.all([a, b, c].map((replica) => set.client(replica)));
      const cursors: number[] = [];
      for (const resumer of resumers) {
        await resumer.request("initialize", { client: { name: "resumer", version: "1" } });
        const cursor = Math.max(1, driver.eventsOf(sessionId).at(-1)!.seq - 2);
        cursors.push(cursor);
        await resumer.request("session/subscribe", { sessionId, afterSeq: cursor });
      }
      await waitForTerminal(driver, sessionId, turnId);
      const full = driver.eventsOf(sessionId);
      expectContiguous(full);
      for (const [i, resumer] of resumers.entries()) {
        await waitForTerminal(resumer, sessionId, turnId);
        const got = resumer.eventsOf(sessionId);
        expectContiguous(got, cursors[i]! + 1);
        expect(got).toEqual(full.slice(cursors[i]!, cursors[i]! + got.length));
      }

      // Closed through a replica that does not own the host: every subscriber, on every replica, hears session.ended.
      await driver.request("session/close", { sessionId });
      for (const client of [driver, ...resumers]) {
        const ended = await client.waitForEvent(sessionId, "session.ended");
        expect(ended.payload).toEqual({ sessionId, reason: "closed" });
        expectContiguous(client.eventsOf(sessionId), client.eventsOf(sessionId)[0]!.seq);
      }
    },
    TEST_TIMEOUT,
  );

  it(
    "lost history is explicit: trimmed (-32602 with the oldest seq), and a flushed store (a new epoch that begins with session.reset)",
    async () => {
      const set = await startReplicaSet(cleanups, { replicas: 2, retention: 8 });
      const [a, b] = set.replicas as [typeof set.replicas[0], typeof set.replicas[0]];
      const live = await set.client(b);
      const sessionId = await createSession(live);
      await live.request("session/subscribe", { sessionId });
      const first = await live.request("session/send", { sessionId, content: LONG_REPLY });
      await waitForTerminal(live, sessionId, first.turnId);
      const newest = live.eventsOf(sessionId).at(-1)!.seq;
      expect(newest).toBeGreaterThan(8);

      // Trimmed: replaying from before the oldest retained event is refused with the oldest seq, on any replica.
      const late = await set.client(a);
      await late.request("initialize", { client: { name: "late", version: "1" } });
      const trimmed = await late.request("session/subscribe", { sessionId, afterSeq: 0 }).then(
        () => undefined,
        (e: RpcError) => e,
      );
      expect(trimmed).toBeInstanceOf(RpcError);
      expect(trimmed!.code).toBe(-32602);
      expect(trimmed!.data).toMatchObject({ oldestSeq: newest - 7 });

      // Flushed: the store loses everything (leases too); the next owner begins a new epoch with a reset.
      expect(await set.redis.command("FLUSHALL")).toContain("OK");
      await until(async () => ((await leasesOwned(a)) + (await leasesOwned(b)) === 1) || undefined, "a replica to own the host again");
      const countBefore = live.eventsOf(sessionId).length;
      const second = await live.request("session/send", { sessionId, content: "after the flush" });
      await waitForTerminal(live, sessionId, second.turnId).catch((error: unknown) => {
        throw new Error(`${String(error)}\nreplica a:\n${a.stderr().slice(-5000)}\nreplica b:\n${b.stderr().slice(-5000)}`);
      });
      const afterFlush = live.eventsOf(sessionId).slice(countBefore);
      // The live subscriber hears the new epoch from its first event: a reset, numbered above every
      // seq the lost history had (clients de-duplicate by seq), then contiguous.
      expect(afterFlush[0]).toMatchObject({ type: "session.reset" });
      const base = afterFlush[0]!.seq;
      expect(base).toBeGreaterThan(newest);
      expectContiguous(afterFlush, base);

      // A client resuming with a cursor from before the flush gets the new epoch from its reset, never a silent gap.
      const resumer = await set.client(a);
      await resumer.request("initialize", { client: { name: "resumer", version: "1" } });
      await resumer.request("session/subscribe", { sessionId, afterSeq: newest });
      await resumer.waitFor(() => resumer.eventsOf(sessionId).some((e: Event) => terminalOf([e], second.turnId)), "the new epoch's events", 30_000);
      expect(resumer.eventsOf(sessionId)[0]).toMatchObject({ type: "session.reset", seq: base });
      // Polling with the old cursor says so too.
      const polled = await resumer.request("session/events", { sessionId, afterSeq: newest }).then(
        () => undefined,
        (e: RpcError) => e,
      );
      expect(polled).toMatchObject({ code: -32602 });
      expect(await metric(a, 'tau_gateway_resumes_total{outcome="reset"}')).toBeGreaterThanOrEqual(2);
    },
    TEST_TIMEOUT,
  );

  it(
    "a replica paused past its lease appends nothing when it wakes: another owns the host and the sequence stays whole",
    async () => {
      const set = await startReplicaSet(cleanups, { replicas: 3 });
      const [owner, second, third] = set.replicas as [typeof set.replicas[0], typeof set.replicas[0], typeof set.replicas[0]];
      const watcher = await set.client(third);
      const sessionId = await createSession(watcher);
      await watcher.request("session/subscribe", { sessionId });
      const { turnId } = await watcher.request("session/send", { sessionId, content: `/sleep 1000\n${LONG_REPLY}` });
      await watcher.waitFor(() => watcher.eventsOf(sessionId).some((e) => e.type === "turn.started"), "the turn to start", 30_000);

      // The owner stops (as a long GC pause or a frozen VM would) until its lease has run out and another replica holds the host.
      owner.child.kill("SIGSTOP");
      try {
        await until(async () => ((await leasesOwned(second)) + (await leasesOwned(third)) === 1) || undefined, "another replica to take the host over");
      } finally {
        owner.child.kill("SIGCONT");
      }
      await until(async () => ((await leasesOwned(owner)) === 0) || undefined, "the woken replica to know it lost the host");
      await waitForTerminal(watcher, sessionId, turnId);
      const next = await watcher.request("session/send", { sessionId, content: "after the pause" });
      await waitForTerminal(watcher, sessionId, next.turnId);

      const events = watcher.eventsOf(sessionId);
      expectContiguous(events);
      expectOneTerminalPerTurn(events);
      expect(await leasesOwned(owner)).toBe(0);
    },
    TEST_TIMEOUT,
  );

  it(
    "Codex and ACP clients are served through replicas that do not own the host",
    async () => {
      const set = await startReplicaSet(cleanups, { replicas: 2 });
      const [owner, other] = set.replicas as [typeof set.replicas[0], typeof set.replicas[0]];
      expect(await leasesOwned(other)).toBe(0);

      const codex = await CodexTestClient.websocket(other.baseUrl.replace("http://", "ws://"));
      cleanups.push(() => codex.socket.terminate());
      await codex.initialize();
      const { thread } = await codex.request("thread/start", {});
      const { messages } = await codex.turn(thread.id, "Hello from Codex");
      expect(agentText(messages)).toBe("You said: Hello from Codex");
      expect(codex.invalid).toEqual([]);

      const stream = createWebSocketStream(`${other.baseUrl.replace("http://", "ws://")}/acp`, { WebSocket: WebSocket as never });
      const text = await acp.client({ name: "replicas" }).connectWith(stream, async (ctx) => {
        await ctx.request(acp.methods.agent.initialize, { protocolVersion: acp.PROTOCOL_VERSION });
        const session = await ctx.buildSession(repoRoot).start();
        void session.prompt("Hello from ACP");
        return session.readText();
      });
      expect(text).toBe("You said: Hello from ACP");
      // The owner reported those sessions' events; the other replica appended no translated ones.
      expect(await metric(owner, 'tau_gateway_store_appends_total{outcome="appended"}')).toBeGreaterThan(0);
    },
    TEST_TIMEOUT,
  );

  it(
    "a replica serving only a subscription reads the session's log; a send there with the running turn's id still finds that turn running",
    async () => {
      const set = await startReplicaSet(cleanups, { replicas: 2 });
      const [owner, other] = set.replicas as [typeof set.replicas[0], typeof set.replicas[0]];
      const starter = await set.client(owner);
      const sessionId = await createSession(starter);
      const phone = await set.client(other);
      await phone.request("initialize", { client: { name: "phone", version: "1" } });
      await phone.request("session/subscribe", { sessionId });
      const { turnId } = await starter.request("session/send", { sessionId, content: `/sleep 1500\n${LONG_REPLY}` });
      await phone.waitFor(() => phone.eventsOf(sessionId).some((e) => e.type === "turn.started"), "the turn to start at the subscriber", 30_000);
      // The send needs to know which turn runs: the replica observes the session for it first.
      const steered = await phone.request("session/send", { sessionId, content: "and one more thing", expectedTurnId: turnId });
      expect(steered).toMatchObject({ accepted: true, turnId });
      await waitForTerminal(phone, sessionId, turnId);
      // Queued behind the running turn (the default), the message runs as a turn of its own after it.
      const queued = () => phone.eventsOf(sessionId).find((e) => e.type === "user.message" && (e.payload as { text?: string }).text === "and one more thing");
      await phone.waitFor(() => queued() !== undefined, "the queued message's turn", 30_000);
      await waitForTerminal(phone, sessionId, (queued()!.payload as { turnId: string }).turnId);
      expectContiguous(phone.eventsOf(sessionId));
      expectOneTerminalPerTurn(phone.eventsOf(sessionId));
    },
    TEST_TIMEOUT,
  );

  it(
    "/readyz is 503 while the store is unreachable",
    async () => {
      const set = await startReplicaSet(cleanups, { replicas: 1 });
      const [a] = set.replicas as [typeof set.replicas[0]];
      expect((await fetch(`${a.baseUrl}/readyz`)).status).toBe(200);
      expect(await metric(a, "tau_gateway_store_reachable")).toBe(1);
      await set.redis.stop();
      await until(async () => ((await fetch(`${a.baseUrl}/readyz`)).status === 503) || undefined, "readiness to fail");
      const body = await (await fetch(`${a.baseUrl}/readyz`)).json();
      expect(body).toMatchObject({ status: "unavailable", reason: expect.stringContaining("store") });
      expect(await metric(a, "tau_gateway_store_reachable")).toBe(0);
    },
    TEST_TIMEOUT,
  );
});
