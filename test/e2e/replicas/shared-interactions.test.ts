import { mkdtempSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import type { Snapshot } from "../../../generated/tau-v18.js";
import { BridgeCore } from "../../../src/bridge/bridge-core.js";
import { gatewayClientTools, InteractionError, type CommandToolConfig } from "../../../src/bridge/interactions/index.js";
import { startTauHost, type RunningTauHost } from "../../../src/host/index.js";
import { openStore, type GatewayStore } from "../../../src/store/index.js";
import type { InteractionStore } from "../../../src/store/interactions.js";
import type { HostOwnership } from "../../../src/store/ownership.js";
import { RedisInteractionStore } from "../../../src/store/redis-interactions.js";
import { TauUpstream } from "../../../src/tau/upstream.js";
import { startRedis, type RunningRedis } from "../../support/redis-server.js";

/**
 * Three gateway replicas (three BridgeCores, each with its own Tau connection and Redis
 * connection) in front of one embedded Tau host, sharing interactions through one real
 * redis-server. A owns the host: its connection advertises the gateway's tools, so Tau's calls go
 * to it; B and C answer. "Killing" A closes its Tau connection (Tau cancels A's calls, as for a
 * dead process) and stops its answer consumer without acknowledging anything.
 */

const echoArgs: CommandToolConfig = {
  name: "echo-args",
  description: "Prints the JSON arguments it was given.",
  parameters: { type: "object", properties: { a: { type: "integer" } }, required: ["a"], additionalProperties: false },
  command: "cat",
};
const COMMAND_TOOLS = [echoArgs];
const HOST_KEY = "tau-embedded";

let redis: RunningRedis;
let host: RunningTauHost;
let cwd: string;
let prefixCounter = 0;

beforeAll(async () => {
  [redis, host] = await Promise.all([startRedis(), startTauHost({ port: 0 })]);
  cwd = realpathSync(mkdtempSync(join(tmpdir(), "shared-interactions-")));
});

afterAll(async () => {
  await host?.close();
  await redis?.stop();
  if (cwd) rmSync(cwd, { recursive: true, force: true });
});

/** Records every request `upstream` sends, with its result once answered, in `sent`. */
function recordRequests(upstream: TauUpstream, sent: Sent[]): void {
  const request = upstream.request.bind(upstream);
  upstream.request = ((method: string, params: any, options?: any) => {
    const entry: Sent = { method, params };
    sent.push(entry);
    const answer = request(method as any, params, options);
    answer.then((result) => (entry.result = result), () => undefined);
    return answer;
  }) as TauUpstream["request"];
}

/** A lease that the test hands from one replica to another. */
class TestOwnership implements HostOwnership {
  private listeners = new Set<(hostKey: string, owned: boolean) => void>();

  constructor(private owned: boolean) {}

  owns(hostKey: string): boolean {
    return hostKey === HOST_KEY && this.owned;
  }

  fence(): number | undefined {
    return this.owned ? 1 : undefined;
  }

  onChange(listener: (hostKey: string, owned: boolean) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  set(owned: boolean): void {
    this.owned = owned;
    for (const listener of this.listeners) listener(HOST_KEY, owned);
  }
}

interface Sent {
  method: string;
  params: any;
  result?: any;
}

/** One gateway replica: its Tau connection (recording what it sends and what Tau answers), its store and its core. */
class Replica {
  readonly sent: Sent[] = [];
  readonly upstream: TauUpstream;
  readonly core: BridgeCore;

  constructor(
    readonly name: string,
    readonly ownership: TestOwnership,
    store: InteractionStore,
    interactionDeadlineMs?: number,
  ) {
    // Only the owner advertises the tools: two attached connections offering one name collide in Tau.
    const tools = ownership.owns(HOST_KEY) ? gatewayClientTools(COMMAND_TOOLS) : [];
    this.upstream = new TauUpstream({ url: host.url, client: { name: `replica-${name}`, version: "1", tools }, reconnect: false });
    recordRequests(this.upstream, this.sent);
    this.core = new BridgeCore({ upstream: this.upstream, commandTools: COMMAND_TOOLS, interactions: store, ownership, hostKey: HOST_KEY, replicaId: name, interactionDeadlineMs });
  }

  async start(): Promise<this> {
    this.core.start();
    await this.upstream.start();
    return this;
  }

  results(): Sent[] {
    return this.sent.filter((s) => s.method === "session.clientTool.result");
  }

  execs(): Sent[] {
    return this.sent.filter((s) => s.method === "session.exec");
  }

  async close(): Promise<void> {
    await this.upstream.close();
    await this.core.close();
  }
}

const running: Replica[] = [];
afterEach(async () => {
  for (const replica of running.splice(0)) await replica.close().catch(() => undefined);
});

/** A store per replica on its own Redis connection; each test has its own key prefix. */
function stores(claimIdleMs = 300): (replicaId: string) => InteractionStore {
  const prefix = `shared-${++prefixCounter}:`;
  return (replicaId) => new RedisInteractionStore(redis.client(), { prefix, replicaId, claimIdleMs, blockMs: 100 });
}

async function replicas(options: { wrapA?: (store: InteractionStore) => InteractionStore; deadlineMs?: number } = {}): Promise<[Replica, Replica, Replica]> {
  const store = stores();
  const storeA = options.wrapA ? options.wrapA(store("A")) : store("A");
  const a = new Replica("A", new TestOwnership(true), storeA, options.deadlineMs);
  const b = new Replica("B", new TestOwnership(false), store("B"));
  const c = new Replica("C", new TestOwnership(false), store("C"));
  running.push(a, b, c);
  await Promise.all([a.start(), b.start(), c.start()]);
  return [a, b, c];
}

/** A session created through A, served by all three; a turn calling echo-args, waiting for approval act_1. */
async function approvalWaiting(a: Replica, b: Replica, c: Replica) {
  const { sessionId } = await a.upstream.request("session.create", { executionEnvironment: { kind: "local", cwd }, attributes: {} });
  // A observes first: its connection attaches the tools to the session.
  await a.core.sessions.open(sessionId);
  const [onB, onC] = await Promise.all([b.core.sessions.open(sessionId), c.core.sessions.open(sessionId)]);
  // Submitted through B: the turn must outlive A.
  const turn = b.upstream.request("session.submit", { sessionId, text: '/tool echo-args {"a":1}', historyEntryId: "turn-1" });
  turn.catch(() => undefined);
  await until(async () => (await onC.interactions.shared.list()).length === 1, "the approval, listed on C");
  return { sessionId, turn, onB, onC };
}

async function until(condition: () => boolean | Promise<boolean>, what: string, timeoutMs = 10_000): Promise<void> {
  const start = Date.now();
  while (!(await condition())) {
    if (Date.now() - start > timeoutMs) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function toolResults(replica: Replica, sessionId: string) {
  const snapshot: Snapshot = await replica.upstream.request("session.snapshot", { sessionId });
  return snapshot.messages
    .map((m) => m.message)
    .filter((m) => m.role === "toolResult")
    .map((m: any) => ({ isError: m.isError, text: (m.content as any[]).filter((b) => b.type === "text").map((b) => b.text).join("") }));
}

/** Both answers at once: one wins, the other gets the "not pending" error a second answer always gets. */
async function answerOnBAndC(onB: Awaited<ReturnType<typeof approvalWaiting>>["onB"], onC: Awaited<ReturnType<typeof approvalWaiting>>["onC"]) {
  const outcomes = await Promise.allSettled([onB.interactions.shared.approve("act_1"), onC.interactions.shared.approve("act_1")]);
  const accepted = outcomes.filter((o) => o.status === "fulfilled");
  const refused = outcomes.flatMap((o) => (o.status === "rejected" ? [o.reason] : []));
  expect(accepted).toHaveLength(1);
  expect(refused).toHaveLength(1);
  expect(refused[0]).toBeInstanceOf(InteractionError);
  expect(refused[0]).toMatchObject({ code: "interaction_not_found", message: "no pending approval act_1" });
}

async function answerStream(prefix: string): Promise<{ length: number; unacknowledged: number }> {
  const client = redis.client();
  const stream = `${prefix}{${HOST_KEY}}:interaction-answers`;
  const pending = (await client.xpending(stream, "owners")) as [number, ...unknown[]];
  return { length: await client.xlen(stream), unacknowledged: Number(pending[0]) };
}

describe("interactions shared by three replicas on Redis", () => {
  it("an approval opened on A, answered on B and C at once: one answer wins, Tau gets one result, the command runs once", async () => {
    const [a, b, c] = await replicas();
    const { sessionId, turn, onB, onC } = await approvalWaiting(a, b, c);
    expect(await onB.interactions.shared.list()).toEqual([expect.objectContaining({ id: "act_1", kind: "approval", status: "pending" })]);

    await answerOnBAndC(onB, onC);
    expect((await turn).turn.status).toBe("completed");
    expect(await toolResults(a, sessionId)).toEqual([{ isError: false, text: '{"a":1}' }]);
    expect(a.execs()).toHaveLength(1);
    expect(a.results().map((r) => r.result)).toEqual([{ accepted: true }]);
    expect([...b.results(), ...c.results()]).toEqual([]);
    // The owner carried it out and says so once, in its session's events.
    const updates = a.core.sessions.get(sessionId)!.hub.log.read(0).events.filter((e) => e.type === "approval.updated");
    expect(updates.map((e) => e.payload)).toEqual([{ id: "act_1", status: "approved" }]);
    // A later answer anywhere gets the same error.
    await expect(onB.interactions.shared.approve("act_1")).rejects.toMatchObject({ code: "interaction_not_found", message: "no pending approval act_1" });
    expect(await onC.interactions.shared.list()).toEqual([]);
    await sleep(700); // past two claim periods: nothing is delivered again
    expect(a.results()).toHaveLength(1);
  });

  it("an approval that expires on A is gone on B and C too: answering it there gets the not-pending error, and Tau gets A's refusal", async () => {
    const [a, b, c] = await replicas({ deadlineMs: 1_000 });
    const { sessionId, turn, onB, onC } = await approvalWaiting(a, b, c);
    expect((await turn).turn.status).toBe("completed");
    expect(await onB.interactions.shared.list()).toEqual([]);
    await expect(onC.interactions.shared.approve("act_1")).rejects.toMatchObject({ code: "interaction_not_found", message: "no pending approval act_1" });
    const [result] = await toolResults(a, sessionId);
    expect(result).toMatchObject({ isError: true, text: expect.stringContaining("not approved") });
    expect(a.execs()).toEqual([]);
  });

  it("an approval whose call Tau cancels (the turn interrupted) is gone on B and C too", async () => {
    const [a, b, c] = await replicas();
    const { sessionId, turn, onB, onC } = await approvalWaiting(a, b, c);
    await c.upstream.request("session.interrupt", { sessionId });
    await turn.catch(() => undefined);
    await until(async () => (await onB.interactions.shared.list()).length === 0, "the approval withdrawn");
    await expect(onC.interactions.shared.reject("act_1")).rejects.toMatchObject({ code: "interaction_not_found" });
    expect(a.results()).toEqual([]); // a cancelled call gets no result
    const updates = a.core.sessions.get(sessionId)!.hub.log.read(0).events.filter((e) => e.type === "approval.updated");
    expect(updates.map((e) => (e.payload as { status: string }).status)).toEqual(["cancelled"]);
  });

  it("a question opened on A and answered on B reaches Tau through A", async () => {
    const [a, b, c] = await replicas();
    const { sessionId } = await a.upstream.request("session.create", { executionEnvironment: { kind: "local", cwd }, attributes: {} });
    await a.core.sessions.open(sessionId);
    const onB = await b.core.sessions.open(sessionId);
    await c.core.sessions.open(sessionId);
    const turn = a.upstream.request("session.submit", { sessionId, text: '/tool ask_user {"question":"Proceed?"}', historyEntryId: "turn-1" });
    await until(async () => (await onB.interactions.shared.list()).length === 1, "the question, listed on B");
    await onB.interactions.shared.respond("input_1", "yes, go");
    expect((await turn).turn.status).toBe("completed");
    expect(await toolResults(a, sessionId)).toEqual([{ isError: false, text: "yes, go" }]);
    expect(a.results()).toHaveLength(1);
  });

  it("A killed right after Tau took the result, before acknowledging it: C takes the answer over, Tau refuses the repeat, and it is never sent again", async () => {
    let tookResult = false;
    // A's deliveries reach Tau, and then A dies: the acknowledgement never happens.
    const dyingAfterDelivery = (store: InteractionStore): InteractionStore =>
      Object.assign(Object.create(store) as InteractionStore, {
        consume: (hostKey: string, deliver: Parameters<InteractionStore["consume"]>[1]) =>
          store.consume(hostKey, async (answer) => {
            await deliver(answer);
            tookResult = true;
            return new Promise<boolean>(() => undefined);
          }),
      });
    const [a, b, c] = await replicas({ wrapA: dyingAfterDelivery });
    const { sessionId, turn, onB, onC } = await approvalWaiting(a, b, c);
    await answerOnBAndC(onB, onC);
    await until(() => tookResult, "A delivering the answer");
    expect((await turn).turn.status).toBe("completed");
    expect(a.results().map((r) => r.result)).toEqual([{ accepted: true }]);

    // A dies: its Tau connection drops, its consumer stops. C gets the lease.
    await a.upstream.close();
    a.ownership.set(false);
    c.ownership.set(true);
    await until(() => c.results().length === 1 && c.results()[0]!.result !== undefined, "C delivering the answer it took over");
    // Tau had the result already: the repeat is refused, and that ends it (no retry, no command run).
    expect(c.results().map((r) => [r.params.callId, r.result])).toEqual([[a.results()[0]!.params.callId, { accepted: false }]]);
    expect(c.execs()).toEqual([]);
    await sleep(800);
    expect(c.results()).toHaveLength(1);
    expect(b.results()).toEqual([]);
    expect(await toolResults(c, sessionId)).toEqual([{ isError: false, text: '{"a":1}' }]);
  });

  it("A killed after the answer was accepted, before it delivered it: C delivers it once; Tau refuses it (the call ended with A's connection) and it is not retried", async () => {
    const [a, b, c] = await replicas();
    const { sessionId, turn, onB, onC } = await approvalWaiting(a, b, c);
    const prefix = `shared-${prefixCounter}:`;
    // A stops taking answers (dead), then the answer is accepted, then A's Tau connection drops.
    a.ownership.set(false);
    await until(async () => (await answerStream(prefix)).unacknowledged === 0, "A's consumer gone");
    await answerOnBAndC(onB, onC);
    await a.upstream.close();
    expect((await turn).turn.status).toBe("completed"); // Tau cancelled the call with A's connection
    c.ownership.set(true);
    await until(() => c.results().length === 1 && c.results()[0]!.result !== undefined, "C delivering the answer");
    expect(c.results()[0]!.result).toEqual({ accepted: false });
    expect(c.execs()).toEqual([]); // a call nobody may answer any more runs no command
    await until(async () => (await answerStream(prefix)).length === 0, "the answer acknowledged");
    await sleep(800);
    expect(c.results()).toHaveLength(1);
    expect(a.execs()).toEqual([]);
    expect(b.results()).toEqual([]);
    expect((await toolResults(c, sessionId)).every((r) => r.isError)).toBe(true);
  });
});

/**
 * The same three replicas with their session logs in the store too (real leases): the owner's
 * bridge connection observes, the others send on a tool-less one and read the events from Redis.
 */
class LoggingReplica {
  readonly sent: Sent[] = [];
  readonly upstream: TauUpstream;
  readonly plain: TauUpstream;
  readonly core: BridgeCore;

  constructor(
    readonly name: string,
    readonly store: GatewayStore,
    interactions: InteractionStore,
  ) {
    this.upstream = new TauUpstream({ url: host.url, client: { name: `replica-${name}`, version: "1", tools: gatewayClientTools(COMMAND_TOOLS) }, reconnect: false });
    this.plain = new TauUpstream({ url: host.url, client: { name: `replica-${name}-plain`, version: "1" }, reconnect: false });
    recordRequests(this.upstream, this.sent);
    this.core = new BridgeCore({ upstream: this.upstream, plain: this.plain, hostKey: HOST_KEY, store, interactions, commandTools: COMMAND_TOOLS });
  }

  async start(): Promise<this> {
    this.core.start();
    await Promise.all([this.upstream.start(), this.plain.start()]);
    await this.core.claimHosts();
    return this;
  }

  owns(): boolean {
    return this.store.ownership.owns(HOST_KEY);
  }

  results(): Sent[] {
    return this.sent.filter((s) => s.method === "session.clientTool.result");
  }

  /** Stops as a dead process would, as far as the others can tell: no more answers taken, connections gone, lease given up. */
  async close(): Promise<void> {
    await this.core.close();
    await Promise.all([this.upstream.close(), this.plain.close()]);
    await this.store.close();
  }
}

describe("interactions shared by three replicas whose session logs are in the store", () => {
  it("an answer the dead owner carried out and a new owner carries out again is reported once in the session's log", async () => {
    const prefix = `logged-${++prefixCounter}:`;
    let tookResult = false;
    const replica = async (name: string, dying = false) => {
      const store = await openStore(redis.url, { retention: 1_000, leaseTtlMs: 1_000, prefix });
      const shared = new RedisInteractionStore(redis.client(), { prefix, replicaId: store.replicaId, claimIdleMs: 300, blockMs: 100 });
      // A's deliveries reach Tau, and then A dies: the acknowledgement never happens.
      const interactions: InteractionStore = dying
        ? Object.assign(Object.create(shared) as InteractionStore, {
            consume: (hostKey: string, deliver: Parameters<InteractionStore["consume"]>[1]) =>
              shared.consume(hostKey, async (answer) => {
                await deliver(answer);
                tookResult = true;
                return new Promise<boolean>(() => undefined);
              }),
          })
        : shared;
      const started = new LoggingReplica(name, store, interactions);
      running.push(started as unknown as Replica);
      return started.start();
    };
    const a = await replica("A", true);
    await until(() => a.owns(), "A to own the host");
    const [b, c] = await Promise.all([replica("B"), replica("C")]);

    const { sessionId } = await b.plain.request("session.create", { executionEnvironment: { kind: "local", cwd }, attributes: {} });
    await a.core.sessions.open(sessionId);
    const [onB, onC] = await Promise.all([b.core.sessions.open(sessionId), c.core.sessions.open(sessionId)]);
    const turn = b.plain.request("session.submit", { sessionId, text: '/tool echo-args {"a":1}', historyEntryId: "turn-1" });
    turn.catch(() => undefined);
    await until(async () => (await onC.interactions.shared.list()).length === 1, "the approval, listed on C");
    await answerOnBAndC(onB, onC);
    await until(() => tookResult, "A delivering the answer");
    expect((await turn).turn.status).toBe("completed");
    const log = b.store.sessionLog(sessionId)!;
    const updates = async () => (await log.read(0)).filter((e) => e.type === "approval.updated").map((e) => e.payload);
    await until(async () => (await updates()).length === 1, "A's approval.updated in the shared log");

    // A dies; B or C gets the lease, takes the answer over and carries it out again (Tau refuses the repeat).
    await a.close();
    await until(() => b.owns() || c.owns(), "B or C to own the host");
    const next = b.owns() ? b : c;
    await until(() => next.results().some((r) => r.result !== undefined), "the new owner delivering the answer it took over");
    expect(next.results().map((r) => r.result)).toEqual([{ accepted: false }]);
    await until(async () => (await answerStream(prefix)).length === 0, "the answer acknowledged");
    // Whatever the new owner appended is in the log by now: a later event went after it.
    next.core.sessions.get(sessionId)!.hub.emit({ type: "error", payload: { error: "marker", recoverable: true } });
    await until(async () => (await log.read(0)).some((e) => e.type === "error"), "the later event in the shared log");
    expect(await updates()).toEqual([{ id: "act_1", status: "approved" }]);
    for (const replica of [b, c]) {
      const local = replica.core.sessions.get(sessionId)!.hub.log.read(0).events;
      expect(local.filter((e) => e.type === "approval.updated").map((e) => e.payload)).toEqual([{ id: "act_1", status: "approved" }]);
    }
  });
});
