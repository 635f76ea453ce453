import { describe, expect, it } from "vitest";
import { RedisChannels } from "../../../src/store/redis-channels.js";
import { RedisKeys } from "../../../src/store/redis-keys.js";
import { RedisSessionSettings } from "../../../src/store/redis-session-settings.js";
import { cleanupsAfterEach } from "../../support/cleanups.js";
import { startLoopbackRedis } from "../../support/redis-server.js";

/** What replicas share about a session besides its log, in a real redis-server, seen from two replicas' connections. */

const cleanups = cleanupsAfterEach();

async function twoReplicas() {
  const redis = await startLoopbackRedis(cleanups);
  const keys = new RedisKeys("test:");
  const replica = (id: string) => new RedisSessionSettings(redis.client(), keys, new RedisChannels(redis.client(), () => undefined), id);
  return { a: replica("replica-a"), b: replica("replica-b"), redis };
}

/** Resolves after a round trip through the server: what was published before it has been delivered. */
const settled = async (settings: RedisSessionSettings) => {
  await settings.read("flush");
  await new Promise((resolve) => setTimeout(resolve, 50));
};

describe("session settings in Redis", () => {
  it("a session nothing was set for reads as no mode, no grants, open", async () => {
    const { a } = await twoReplicas();
    expect(await a.read("s1")).toEqual({ grants: [], closed: false });
  });

  it("a mode and grants set through one replica are read by the other; the last mode set wins; grants only add", async () => {
    const { a, b } = await twoReplicas();
    await a.setMode("s1", "never");
    await b.grant("s1", "mark");
    await a.grant("s1", "deploy");
    await a.grant("s1", "mark");
    await b.setMode("s1", "plan");
    const read = await a.read("s1");
    expect(read.mode).toBe("plan");
    expect([...read.grants].sort()).toEqual(["deploy", "mark"]);
    expect(read.closed).toBe(false);
    // Another session is untouched.
    expect(await b.read("s2")).toEqual({ grants: [], closed: false });
  });

  it("a mode set through one replica is announced to the other's listeners, not to its own, and not for other sessions", async () => {
    const { a, b } = await twoReplicas();
    const heard = { a: [] as string[], b: [] as string[], other: [] as string[] };
    const stops = [
      await a.onModeSetElsewhere("s1", (mode) => heard.a.push(mode)),
      await b.onModeSetElsewhere("s1", (mode) => heard.b.push(mode)),
      await b.onModeSetElsewhere("s2", (mode) => heard.other.push(mode)),
    ];
    await a.setMode("s1", "auto");
    await a.setMode("s1", "never");
    await b.setMode("s1", "plan");
    await settled(a);
    await settled(b);
    expect(heard).toEqual({ a: ["plan"], b: ["auto", "never"], other: [] });
    stops.forEach((stop) => stop());
    await a.setMode("s1", "on_request");
    await settled(b);
    expect(heard.b).toEqual(["auto", "never"]);
  });

  it("of two closes begun at once, exactly one is claimed; abandoning it opens the session again", async () => {
    const { a, b } = await twoReplicas();
    const claims = await Promise.all([a.beginClose("s1"), b.beginClose("s1")]);
    expect(claims.filter(Boolean)).toHaveLength(1);
    expect((await b.read("s1")).closed).toBe(true);
    expect(await a.beginClose("s1")).toBe(false);
    await a.abandonClose("s1");
    expect((await b.read("s1")).closed).toBe(false);
    expect(await b.beginClose("s1")).toBe(true);
  });

  it("a mode or grant written after a close keeps the session closed", async () => {
    const { a, b } = await twoReplicas();
    expect(await a.beginClose("s1")).toBe(true);
    await b.setMode("s1", "auto");
    await b.grant("s1", "mark");
    expect(await a.read("s1")).toEqual({ mode: "auto", grants: ["mark"], closed: true });
  });

  it("tells which of many sessions are closed in one round trip", async () => {
    const { a, b } = await twoReplicas();
    await a.beginClose("s2");
    await a.beginClose("s4");
    await b.setMode("s3", "auto");
    expect(await b.closedAmong(["s1", "s2", "s3", "s4", "s5"])).toEqual(new Set(["s2", "s4"]));
    expect(await b.closedAmong([])).toEqual(new Set());
  });

  it("keeps everything of a session in one hash under the session's hash tag", async () => {
    const { a, redis } = await twoReplicas();
    await a.setMode("s1", "auto");
    await a.grant("s1", "mark");
    await a.beginClose("s1");
    const fields = await redis.client().hgetall("test:{s1}:settings");
    expect(Object.keys(fields).sort()).toEqual(["closed", "grant:mark", "mode"]);
  });
});
