import { afterEach, beforeEach, expect, it } from "vitest";
import type { Event } from "../../../generated/ask-v1.0.js";
import { SessionHub } from "../../../src/bridge/session-hub.js";
import { openStore, type RedisStore } from "../../../src/store/index.js";
import { TauUpstream } from "../../../src/tau/upstream.js";
import { startRedis, type RunningRedis } from "../../support/redis-server.js";
import { until } from "../../support/replica-set.js";
import { HostHarness, type TauTestClient } from "../../support/tau-client.js";

/**
 * Session hubs of three replicas on one shared log (a real redis-server, the embedded host, a Tau
 * connection each): the owner's observes and reports the session; a hub opened only to read the
 * log (an Ask subscription on a replica that does not own the host) gets every event from the
 * store and not one delta from the host, until something needs the session's live state
 * (`follow`), from when on it observes; and a hub still reading the log alone whose replica
 * becomes the host's owner observes and continues the log, each turn told once.
 *
 * Which replica owns the host is the store's real lease: replica 0 holds it, then stops and
 * replica 2 takes it.
 */

const HOST_KEY = "log-reader-test-host";
const WAIT_MS = 20_000;

let redis: RunningRedis;
let stores: RedisStore[];
let h: HostHarness;
let driver: TauTestClient;
let sessionId: string;
let upstreams: TauUpstream[];

beforeEach(async () => {
  redis = await startRedis();
  const open = () => openStore(`${redis.url}/0`, { retention: 1_000, leaseTtlMs: 5_000, maxAgeMs: 0 }) as Promise<RedisStore>;
  stores = [await open(), await open(), await open()];
  h = new HostHarness();
  await h.start();
  ({ client: driver, sessionId } = await h.connectWithSession({ name: "driver" }));
  upstreams = [0, 1, 2].map((i) => new TauUpstream({ url: h.host.url, client: { name: `log-reader-tests-${i}`, version: "1" }, reconnect: false }));
  await Promise.all(upstreams.map((u) => u.start()));
}, 60_000);

afterEach(async () => {
  await Promise.all(upstreams.map((u) => u.close()));
  await h.dispose();
  // Replica 0's store is closed already by the test that took its lease over.
  await Promise.all(stores.map((s) => s.close().catch(() => undefined)));
  await redis.stop();
});

const turnIdOf = (e: Event) => (e.payload as { turnId?: string }).turnId;
const ended = (hub: SessionHub, turnId: string) => hub.log.read(0).events.some((e) => e.type === "turn.completed" && turnIdOf(e) === turnId);
const shape = (hub: SessionHub) => hub.log.read(0).events.map((e) => `${e.seq} ${e.type}`);

it("a hub reading the log alone gets every event and no delta; once it follows it observes; once its replica owns the host it reports the session", async () => {
  stores[0]!.ownership.claim(HOST_KEY);
  await until(() => (stores[0]!.ownership.owns(HOST_KEY)) || undefined, "the lease", WAIT_MS);
  // Replica 0 holds the host's lease; 1 and 2 do not (2 takes it over below).
  const hubs = [0, 1, 2].map(
    (i) => new SessionHub({ sessionId, upstream: upstreams[i]!, shared: { store: stores[i]!.sessionLog(sessionId)!, ownership: stores[i]!.ownership, hostKey: HOST_KEY } }),
  );
  const deltas = [0, 0, 0];
  upstreams.forEach((upstream, i) =>
    upstream.onMessage((message) => {
      if (message.type === "session.delta" && message.sessionId === sessionId) deltas[i]! += 1;
      hubs[i]!.handle(message);
    }),
  );
  const [reporter, reader, successor] = hubs as [SessionHub, SessionHub, SessionHub];
  await reporter.attach();
  await reader.attach({ follow: false });
  await successor.attach({ follow: false });
  expect(reader.observed).toBe(false);
  expect(reader.snapshot).toBeUndefined();
  expect(reader.openedWith?.sessionId).toBe(sessionId);

  await driver.call("session.submit", { sessionId, text: "/sleep 600\none", historyEntryId: "turn-1" });
  // Which turn runs is read from the log meanwhile.
  await until(() => (reader.activeTurnId === "turn-1" && reader.running) || undefined, "the reader to see turn-1 running", WAIT_MS);
  await until(() => (ended(reader, "turn-1") && ended(successor, "turn-1")) || undefined, "turn-1's end in the readers' logs", WAIT_MS);
  await reporter.appended();
  expect(shape(reader)).toEqual(shape(reporter));
  expect(deltas[0]).toBeGreaterThan(0);
  expect(deltas.slice(1), "deltas that reached the hubs reading the log alone").toEqual([0, 0]);
  expect(reader.running).toBe(false);
  expect(reader.runningTurnIds).toEqual([]);

  // Something on the reader's replica needs the live state: callers at once share one observe.
  await Promise.all([reader.follow(), reader.follow()]);
  expect(reader.observed).toBe(true);
  await driver.call("session.submit", { sessionId, text: "/sleep 800\ntwo", historyEntryId: "turn-2" });
  await until(() => (reader.activeTurnId === "turn-2") || undefined, "the reader to see turn-2 running", WAIT_MS);
  await until(() => (ended(reporter, "turn-2") && ended(reader, "turn-2")) || undefined, "turn-2's end in both logs", WAIT_MS);
  const truth = await driver.snapshot(sessionId);
  await until(() => (JSON.stringify(reader.snapshot) === JSON.stringify(truth)) || undefined, "the reader's snapshot to hold turn-2", WAIT_MS);
  expect(deltas[1]).toBeGreaterThan(0);
  expect(deltas[2]).toBe(0);
  // It follows, and appends nothing it translates: one log, as the reporter has it.
  await reader.appended();
  expect(shape(reader)).toEqual(shape(reporter));

  // Replica 0 stops (its lease released) and replica 2, its hub still reading the log alone, takes the host over: it observes and reports from here on.
  await reporter.detach();
  await stores[0]!.close();
  stores[2]!.ownership.claim(HOST_KEY);
  await until(() => (stores[2]!.ownership.owns(HOST_KEY)) || undefined, "replica 2 to hold the lease", WAIT_MS);
  await successor.rebind(upstreams[2]!);
  expect(successor.observed).toBe(true);
  await driver.call("session.submit", { sessionId, text: "three", historyEntryId: "turn-3" });
  await until(() => (ended(successor, "turn-3") && ended(reader, "turn-3")) || undefined, "turn-3's end, reported by replica 2", WAIT_MS);
  await successor.appended();
  const all = successor.log.read(0).events;
  all.forEach((e, i) => expect(e.seq).toBe(all[0]!.seq + i));
  for (const turnId of ["turn-1", "turn-2", "turn-3"]) {
    expect(all.filter((e) => e.type === "turn.started" && turnIdOf(e) === turnId), `${turnId} started once`).toHaveLength(1);
    expect(all.filter((e) => e.type === "turn.completed" && turnIdOf(e) === turnId), `${turnId} ended once`).toHaveLength(1);
  }
  expect(all.find((e) => e.type === "turn.completed" && turnIdOf(e) === "turn-3")!.payload).toMatchObject({ response: "You said: three" });
  await Promise.all([reader.detach(), successor.detach()]);
}, 60_000);
