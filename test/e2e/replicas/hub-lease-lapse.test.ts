import { afterEach, beforeEach, expect, it } from "vitest";
import type { Event } from "../../../generated/ask-v1.0.js";
import { SessionHub } from "../../../src/bridge/session-hub.js";
import { openStore, type HostOwnership, type RedisStore } from "../../../src/store/index.js";
import { TauUpstream } from "../../../src/tau/upstream.js";
import { startRedis, type RunningRedis } from "../../support/redis-server.js";
import { until } from "../../support/replica-set.js";
import { HostHarness, type TauTestClient } from "../../support/tau-client.js";

/**
 * A session hub on a shared log (a real redis-server, the embedded host) whose replica stops
 * owning the host and owns it again without observing the session anew, as when its lease ran out
 * locally and was then renewed: while it does not own the host it keeps its snapshot current and
 * appends nothing (nor translates); once it owns it again it continues the shared log with a
 * resync, so the turn that ran meanwhile is told and every turn ends exactly once.
 *
 * The lease is the store's real one; the test only hides it from the hub for a while, since a
 * lease that lapses locally and is renewed cannot be brought about on cue.
 */

const HOST_KEY = "lapse-test-host";
const WAIT_MS = 20_000;

let redis: RunningRedis;
let store: RedisStore;
let h: HostHarness;
let driver: TauTestClient;
let sessionId: string;
let upstream: TauUpstream;

beforeEach(async () => {
  redis = await startRedis();
  store = (await openStore(`${redis.url}/0`, { retention: 1_000, leaseTtlMs: 5_000, maxAgeMs: 0 })) as RedisStore;
  h = new HostHarness();
  await h.start();
  ({ client: driver, sessionId } = await h.connectWithSession({ name: "driver" }));
  upstream = new TauUpstream({ url: h.host.url, client: { name: "lapse-tests", version: "1" }, reconnect: false });
  await upstream.start();
}, 60_000);

afterEach(async () => {
  await upstream.close();
  await h.dispose();
  await store.close();
  await redis.stop();
});

const turnIdOf = (e: Event) => (e.payload as { turnId?: string }).turnId;

it("a replica that stops owning the host appends nothing, and on owning it again continues the shared log with a resync", async () => {
  store.ownership.claim(HOST_KEY);
  await until(() => (store.ownership.owns(HOST_KEY)) || undefined, "the lease", WAIT_MS);
  let hidden = false;
  const ownership: HostOwnership = {
    owns: (hostKey) => !hidden && store.ownership.owns(hostKey),
    fence: (hostKey) => (hidden ? undefined : store.ownership.fence(hostKey)),
    onChange: () => () => undefined,
  };
  const hub = new SessionHub({ sessionId, upstream, shared: { store: store.sessionLog(sessionId), ownership, hostKey: HOST_KEY } });
  upstream.onMessage((message) => hub.handle(message));
  await hub.attach();
  const events = () => hub.log.read(0).events;
  const ended = (turnId: string) => events().some((e) => e.type === "turn.completed" && turnIdOf(e) === turnId);

  await driver.call("session.submit", { sessionId, text: "one", historyEntryId: "turn-1" });
  await until(() => (ended("turn-1")) || undefined, "turn-1's end in the log", WAIT_MS);
  const before = events().length;

  hidden = true;
  await driver.call("session.submit", { sessionId, text: "two", historyEntryId: "turn-2" });
  const truth = await driver.snapshot(sessionId);
  await until(() => (JSON.stringify(hub.snapshot) === JSON.stringify(truth)) || undefined, "the hub's snapshot to hold turn-2", WAIT_MS);
  await hub.appended();
  expect(events()).toHaveLength(before);

  hidden = false;
  await driver.call("session.submit", { sessionId, text: "three", historyEntryId: "turn-3" });
  await until(() => (ended("turn-3")) || undefined, "turn-3's end in the log", WAIT_MS);

  const all = events();
  all.forEach((e, i) => expect(e.seq).toBe(all[0]!.seq + i));
  const types = all.map((e) => e.type);
  const reset = types.indexOf("session.reset", before);
  expect(reset).toBe(before);
  expect(all[reset]!.payload).toMatchObject({ cause: "resync" });
  for (const turnId of ["turn-1", "turn-2", "turn-3"]) {
    const started = all.filter((e) => e.type === "turn.started" && turnIdOf(e) === turnId);
    const terminals = all.filter((e) => ["turn.completed", "turn.failed", "turn.aborted"].includes(e.type) && turnIdOf(e) === turnId);
    expect(started, `${turnId} started once`).toHaveLength(1);
    expect(terminals.map((e) => e.type), `${turnId} ended once`).toEqual(["turn.completed"]);
  }
  expect(all.filter((e) => e.type === "turn.completed" && turnIdOf(e) === "turn-2")[0]!.payload).toMatchObject({ response: "You said: two" });
  expect(types.indexOf("turn.started", reset)).toBeLessThan(all.findIndex((e) => e.type === "turn.started" && turnIdOf(e) === "turn-3"));
  await hub.detach();
}, 60_000);
