import { mkdtempSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { AskPeer } from "../../../src/ask/peer.js";
import { BridgeStack } from "../../../src/cli/bridge-stack.js";
import { startTauHost, type RunningTauHost } from "../../../src/host/index.js";
import { hostKeyOf } from "../../../src/store/host-key.js";
import { MemoryPlacementStore, RedisPlacementStore, type PlacementStore } from "../../../src/store/placement.js";
import { UpstreamUnavailableError } from "../../../src/tau/upstream.js";
import { eventually } from "../../support/ask-events.js";
import { cleanupsAfterEach } from "../../support/cleanups.js";
import { freePort } from "../../support/free-port.js";
import { startLoopbackRedis } from "../../support/redis-server.js";

/**
 * Placements shared through Redis by two bridge stacks (two replicas) over the same two Tau hosts:
 * new sessions go to the host the store says is least loaded, and a replica that never saw a
 * session sends it to the host the store names.
 */

const cleanups = cleanupsAfterEach();

async function host(port = 0): Promise<RunningTauHost> {
  const started = await startTauHost({ host: "127.0.0.1", port });
  cleanups.push(() => started.close());
  return started;
}

async function stackOver(hosts: Array<{ url: string }>, placement: PlacementStore, cwd: string): Promise<BridgeStack> {
  const stack = new BridgeStack();
  cleanups.push(() => stack.close());
  await stack.start({ upstream: hosts.map((h) => h.url), placement, defaultCwd: cwd, eventRetention: 1000, interactionTimeoutMs: 300_000 }, [], () => undefined);
  return stack;
}

describe("placements in Redis across replicas", () => {
  it("places new sessions by the load the store holds, and routes a session it never saw to the host the store names", async () => {
    const cwd = realpathSync(mkdtempSync(join(tmpdir(), "host-placement-")));
    cleanups.push(() => rmSync(cwd, { recursive: true, force: true }));
    const redis = await startLoopbackRedis(cleanups);
    const [a, b] = await Promise.all([host(), host()]);
    const [keyA, keyB] = [hostKeyOf(a.url), hostKeyOf(b.url)];
    const store = new RedisPlacementStore(redis.client(), "t:");
    // Another replica's sessions on A.
    for (const id of ["elsewhere-1", "elsewhere-2", "elsewhere-3"]) await store.place(id, keyA);

    const first = await stackOver([a, b], new RedisPlacementStore(redis.client(), "t:"), cwd);
    const create = async () => (await first.core!.hosts.request("session.create", { executionEnvironment: { kind: "local", cwd }, attributes: {} })).sessionId;
    const created = [await create(), await create(), await create(), await create()];
    expect(await Promise.all(created.map((id) => store.hostOf(id)))).toEqual([keyB, keyB, keyB, keyA]);
    expect([await store.load(keyA), await store.load(keyB)]).toEqual([4, 3]);
    // Ask session/close: the session no longer counts towards its host's load (it stays placed there).
    const peer: AskPeer = { id: "p", capabilities: { reverseRequests: false }, notify: () => undefined, request: () => Promise.reject(new Error("none")), closed: false };
    await first.ask!.call(peer, "session/close", { sessionId: created[2]! });
    for (let i = 0; i < 100 && (await store.load(keyB)) !== 2; i++) await new Promise((resolve) => setTimeout(resolve, 20));
    expect([await store.load(keyA), await store.load(keyB)]).toEqual([4, 2]);
    expect(await store.hostOf(created[2]!)).toBe(keyB);

    // A second replica (the first one gone: two bridge connections of one host may not both offer
    // the gateway's tools in a session). B's session goes to B even while B is down, so only the
    // store can have said so.
    await first.close();
    const second = await stackOver([a, b], new RedisPlacementStore(redis.client(), "t:"), cwd);
    expect((await second.core!.hosts.hostFor(created[0]!)).key).toBe(keyB);
    expect((await second.core!.sessions.open(created[3]!)).sessionId).toBe(created[3]);
    await b.close();
    expect((await second.core!.hosts.hostFor(created[1]!)).key).toBe(keyB);
    await expect(second.core!.sessions.open(created[1]!)).rejects.toBeInstanceOf(UpstreamUnavailableError);
    // A session nobody placed, with B down: it may be on B, so "unavailable", never "not found".
    await expect(second.core!.hosts.request("session.snapshot", { sessionId: "nowhere" })).rejects.toBeInstanceOf(UpstreamUnavailableError);
  });
});

describe("a Tau host down when the gateway starts", () => {
  it("serves with the hosts that are up, and takes the other one in once it comes up", async () => {
    const up = await host();
    const port = await freePort();
    const stack = await stackOver([up, { url: `ws://127.0.0.1:${port}` }], new MemoryPlacementStore(), process.cwd());
    const router = stack.core!.hosts;
    expect(router.hosts.map((h) => h.connected)).toEqual([true, false]);
    expect(router.connected).toBe(true);
    const create = async () => (await router.request("session.create", { executionEnvironment: { kind: "local", cwd: process.cwd() }, attributes: {} })).sessionId;
    expect((await router.hostFor(await create())).key).toBe(hostKeyOf(up.url));

    await host(port);
    await eventually(() => router.hosts[1]!.connected, "the second host to be connected", 15_000);
    // The late host has no session yet: it is the least loaded.
    expect((await router.hostFor(await create())).key).toBe(`ws://127.0.0.1:${port}`);
  });
});
