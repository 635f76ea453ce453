import { describe, expect, it } from "vitest";
import { MemoryPlacementStore, RedisPlacementStore, type PlacementStore } from "../../../src/store/placement.js";
import { cleanupsAfterEach } from "../../support/cleanups.js";
import { startLoopbackRedis } from "../../support/redis-server.js";

/** The session → host map both ways: in memory and in a real redis-server on loopback. */

const cleanups = cleanupsAfterEach();

const stores: Array<[string, () => Promise<{ a: PlacementStore; b: PlacementStore }>]> = [
  [
    "memory",
    async () => {
      const store = new MemoryPlacementStore();
      return { a: store, b: store };
    },
  ],
  [
    "redis",
    async () => {
      const redis = await startLoopbackRedis(cleanups);
      // Two replicas: two connections, one prefix.
      return { a: new RedisPlacementStore(redis.client(), "test:"), b: new RedisPlacementStore(redis.client(), "test:") };
    },
  ],
];

describe.each(stores)("placements (%s)", (_kind, open) => {
  it("remembers each session's host, seen from every replica", async () => {
    const { a, b } = await open();
    expect(await b.hostOf("s1")).toBeUndefined();
    await a.place("s1", "ws://h1:1");
    await a.place("s2", "ws://h2:2");
    expect(await b.hostOf("s1")).toBe("ws://h1:1");
    expect(await b.hostOf("s2")).toBe("ws://h2:2");
  });

  it("counts a host's sessions until they are released; a released session stays placed", async () => {
    const { a, b } = await open();
    await a.place("s1", "h1");
    await a.place("s2", "h1");
    await b.place("s3", "h2");
    await b.place("s2", "h1"); // placing again counts once
    expect([await b.load("h1"), await a.load("h2"), await a.load("h3")]).toEqual([2, 1, 0]);
    await b.release("s1");
    await b.release("unknown");
    expect(await a.load("h1")).toBe(1);
    expect(await a.hostOf("s1")).toBe("h1");
  });

  it("moves a session placed on another host", async () => {
    const { a } = await open();
    await a.place("s1", "h1");
    await a.place("s1", "h2");
    expect([await a.hostOf("s1"), await a.load("h1"), await a.load("h2")]).toEqual(["h2", 0, 1]);
  });
});

describe("placements in redis", () => {
  it("keeps every key under the prefix, with the session or host as hash tag", async () => {
    const redis = await startLoopbackRedis(cleanups);
    const client = redis.client();
    const store = new RedisPlacementStore(client, "pfx:");
    await store.place("s1", "ws://127.0.0.1:9");
    expect((await client.keys("*")).sort()).toEqual(["pfx:host:{ws://127.0.0.1:9}:sessions", "pfx:placement:{s1}"]);
  });
});
