import { describe, expect, it } from "vitest";
import { terminalOf } from "../../support/ask-events.js";
import { cleanupsAfterEach } from "../../support/cleanups.js";
import type { RunningRedis } from "../../support/redis-server.js";
import { startReplicaSet, until } from "../../support/replica-set.js";
import { expectEachTurnOnce, expectStoreUnavailable, follow, turnReached, type Followers } from "../../support/store-fault-clients.js";

/**
 * The shared store itself going away mid-turn, every part a real process: two replicas on one
 * redis-server that the test freezes (SIGSTOP) and thaws, or kills and starts again empty on the
 * same port, while a turn streams. Ask, Codex and ACP clients follow the session through each
 * replica. While the store is away both replicas are unready and answer requests that need it at
 * once with -32012 "store unavailable" in each dialect's shape; once it is back every follower on
 * every replica gets each turn ending exactly once, Ask seqs with no gap or duplicate (a
 * `session.reset` where the store lost its data).
 */

const cleanups = cleanupsAfterEach();
const LONG = Array.from({ length: 80 }, (_, i) => `word${i}`).join(" ");

const readyz = async (baseUrl: string) => (await fetch(`${baseUrl}/readyz`)).status;

async function outageMidTurn(fault: { begin(redis: RunningRedis): Promise<void> | void; end(redis: RunningRedis): Promise<void> }) {
  const set = await startReplicaSet(cleanups, { replicas: 2 });
  const [owner, other] = set.replicas as [(typeof set.replicas)[0], (typeof set.replicas)[0]];
  const driver = await set.client(owner);
  await driver.request("initialize", { client: { name: "driver", version: "1" } });
  const { session } = await driver.request("session/create", {});
  const sessionId = session.sessionId as string;
  await driver.request("session/subscribe", { sessionId });
  const followers: Followers[] = [await follow(set, owner, sessionId, cleanups), await follow(set, other, sessionId, cleanups)];

  const turns: Array<{ turnId: string; content: string }> = [];
  const send = async (content: string) => {
    const { turnId } = await driver.request("session/send", { sessionId, content });
    turns.push({ turnId, content });
    return turnId;
  };
  const before = await send("before the outage");
  await Promise.all(followers.map((f) => turnReached(f, sessionId, before, "before the outage")));

  // Mid-turn: the reply is streaming when the store goes.
  const midContent = `during the outage ${LONG}`;
  const mid = await send(midContent);
  const streaming = () => {
    const events = driver.eventsOf(sessionId);
    const start = events.findIndex((e) => e.type === "turn.started" && (e.payload as { turnId: string }).turnId === mid);
    return start >= 0 && events.slice(start).some((e) => e.type === "model.streaming");
  };
  await driver.waitFor(streaming, "the turn to stream");
  await fault.begin(set.redis);

  for (const replica of set.replicas) await until(async () => ((await readyz(replica.baseUrl)) === 503) || undefined, `${replica.baseUrl} to turn unready`);
  await Promise.all(followers.map(expectStoreUnavailable));

  await fault.end(set.redis);
  for (const replica of set.replicas) await until(async () => ((await readyz(replica.baseUrl)) === 200) || undefined, `${replica.baseUrl} to be ready again`);
  await Promise.all(followers.map((f) => turnReached(f, sessionId, mid, midContent)));

  const after = await send("after the outage");
  await Promise.all(followers.map((f) => turnReached(f, sessionId, after, "after the outage")));
  // An ACP prompt through the other replica is answered with its stop reason, and every follower sees it.
  const acp = followers[1]!.acp;
  const prompted = await acp.request("session/prompt", { sessionId, prompt: [{ type: "text", text: "from ACP" }] });
  expect(prompted.result).toEqual(expect.objectContaining({ stopReason: "end_turn" }));
  // The driver, on the owner, hears of the ACP turn when its events reach it (after the prompt's answer, possibly).
  const known = new Set(turns.map((t) => t.turnId));
  const acpStarted = () => driver.eventsOf(sessionId).find((e) => e.type === "turn.started" && !known.has((e.payload as { turnId: string }).turnId));
  await driver.waitFor(() => acpStarted() !== undefined, "the ACP prompt's turn at the driver");
  const acpTurnId = (acpStarted()!.payload as { turnId: string }).turnId;
  turns.push({ turnId: acpTurnId, content: "from ACP" });
  await Promise.all(followers.map((f) => turnReached(f, sessionId, acpTurnId, "from ACP")));
  await driver.waitFor(() => terminalOf(driver.eventsOf(sessionId), acpTurnId) !== undefined, "the ACP turn's end at the driver");
  expect(terminalOf(driver.eventsOf(sessionId), acpTurnId)?.type).toBe("turn.completed");

  for (const f of followers) expectEachTurnOnce(f, sessionId, turns);
  return { followers, sessionId };
}

describe("the shared store going away mid-turn", () => {
  it(
    "paused (SIGSTOP) and resumed: requests fail fast with -32012, both replicas unready, every follower gets every turn's end once",
    async () => {
      await outageMidTurn({ begin: (redis) => redis.pause(), end: async (redis) => redis.resume() });
    },
    90_000,
  );

  it(
    "killed and restarted empty: requests fail fast with -32012, both replicas unready, every stream is reset once (one reset, or two in a row) and every follower gets every turn's end once",
    async () => {
      const { followers, sessionId } = await outageMidTurn({ begin: (redis) => redis.kill(), end: (redis) => redis.restart() });
      // The lost log is said once per stream: the store's new log begins with a reset, followed at
      // once by the new lease holder's resync from the host where the lease went with the data.
      for (const f of followers) {
        const events = f.ask.eventsOf(sessionId);
        const resets = events.flatMap((e, i) => (e.type === "session.reset" ? [i] : []));
        const shown = JSON.stringify(events.filter((e) => e.type !== "model.streaming").map((e) => [e.seq, e.type, e.type === "session.reset" ? e.payload : ""]));
        expect(resets.length, `resets on ${f.replica.baseUrl}: ${shown}`).toBeGreaterThanOrEqual(1);
        expect(resets.length, `resets on ${f.replica.baseUrl}: ${shown}`).toBeLessThanOrEqual(2);
        expect(resets.at(-1)! - resets[0]!, `resets on ${f.replica.baseUrl} come together: ${shown}`).toBe(resets.length - 1);
      }
    },
    90_000,
  );
});
