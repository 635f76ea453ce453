import { describe, expect, it } from "vitest";
import { RedisChannels } from "../../../src/store/redis-channels.js";
import { RedisKeys } from "../../../src/store/redis-keys.js";
import { RedisSessionRoles } from "../../../src/store/redis-session-roles.js";
import { MemorySessionRoles, type SessionRoleStore } from "../../../src/store/session-roles.js";
import { eventually } from "../../support/ask-events.js";
import { cleanupsAfterEach } from "../../support/cleanups.js";
import { startLoopbackRedis } from "../../support/redis-server.js";

/**
 * Session roles as replicas share them, in a real redis-server seen from two replicas' connections
 * (and the memory store's, one process): a role granted or revoked through either is read by both
 * and announced to every listener of that session, the setting replica's own among them.
 */

const cleanups = cleanupsAfterEach();

async function twoReplicas(): Promise<[SessionRoleStore, SessionRoleStore]> {
  const redis = await startLoopbackRedis(cleanups);
  const keys = new RedisKeys("test:");
  const replica = () => new RedisSessionRoles(redis.client(), keys, new RedisChannels(redis.client(), () => undefined));
  return [replica(), replica()];
}

/** Listens on both stores for s1 and s2; counts what each heard. */
async function listening(a: SessionRoleStore, b: SessionRoleStore) {
  const heard = { a1: 0, b1: 0, a2: 0, b2: 0 };
  const stops = [
    await a.onChange("s1", () => heard.a1++),
    await b.onChange("s1", () => heard.b1++),
    await a.onChange("s2", () => heard.a2++),
    await b.onChange("s2", () => heard.b2++),
  ];
  cleanups.push(() => stops.forEach((stop) => stop()));
  return heard;
}

function oneMemoryStore(): Promise<[SessionRoleStore, SessionRoleStore]> {
  const store = new MemorySessionRoles();
  return Promise.resolve([store, store]);
}

describe.each([
  ["Redis, two replicas", twoReplicas],
  ["memory", oneMemoryStore],
])("session roles in %s", (_name, stores) => {
  it("a grant and a revoke through one are read by the other and heard by every listener of the session, not by another session's", async () => {
    const [a, b] = await stores();
    const heard = await listening(a, b);
    await a.setRole("s1", "bob", "observer");
    expect(await b.read("s1")).toEqual({ granted: { bob: "observer" } });
    await b.setRole("s1", "bob", null);
    expect(await a.read("s1")).toEqual({ granted: {} });
    // A change of s2 announced after both of s1's: once each store heard it, it heard s1's two (a connection delivers in order).
    await a.setRole("s2", "carol", "controller");
    await eventually(() => heard.a2 === 1 && heard.b2 === 1, "s2's change to be heard");
    expect(heard).toEqual({ a1: 2, b1: 2, a2: 1, b2: 1 });
  });

  it("an unsubscribed listener hears nothing more", async () => {
    const [a, b] = await stores();
    // Two listeners of one session on one connection: stopping one leaves the other (and the channel) listening.
    let heard = 0;
    const stop = await b.onChange("s1", () => heard++);
    const later = { count: 0 };
    const stopLater = await b.onChange("s1", () => later.count++);
    cleanups.push(stopLater);
    await a.setRole("s1", "bob", "controller");
    await eventually(() => heard === 1 && later.count === 1, "the grant to be heard");
    stop();
    await a.setRole("s1", "bob", "observer");
    await eventually(() => later.count === 2, "the second grant to be heard");
    expect(heard).toBe(1);
  });
});
