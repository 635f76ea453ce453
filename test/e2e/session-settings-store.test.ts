import { describe, expect, it } from "vitest";
import { RedisKeys } from "../../src/store/redis-keys.js";
import { RedisSessionSettings } from "../../src/store/redis-session-settings.js";
import { cleanupsAfterEach } from "../support/cleanups.js";
import { startLoopbackRedis } from "../support/redis-server.js";

/** What replicas share about a session besides its log, in a real redis-server, seen from two replicas' connections. */

const cleanups = cleanupsAfterEach();

async function twoReplicas() {
  const redis = await startLoopbackRedis(cleanups);
  const keys = new RedisKeys("test:");
  return { a: new RedisSessionSettings(redis.client(), keys), b: new RedisSessionSettings(redis.client(), keys), redis };
}

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
