import { expect } from "vitest";
import type { Event } from "../../generated/ask-v1.0.js";
import { RawAcpClient } from "./acp-raw-client.js";
import { RpcError, type AskTestClient } from "./ask-client.js";
import { expectOneTerminalPerTurn, terminalOf } from "./ask-events.js";
import type { Cleanups } from "./cleanups.js";
import { repoRoot, type ServingCli } from "./cli.js";
import { CodexTestClient } from "./codex-client.js";
import type { ReplicaSet } from "./replica-set.js";

/**
 * One client of each dialect following a session through one replica, for the store-fault tests:
 * an Ask subscriber, a Codex client that resumed the thread, and an ACP client that loaded the
 * session. Each can be asked for a request that needs the store (to see the error it gets while
 * the store is away) and checked for every turn ending exactly once.
 */
export interface Followers {
  replica: ServingCli;
  ask: AskTestClient;
  codex: CodexTestClient;
  acp: RawAcpClient;
  /** How many ACP messages came before the session/load answer (the replayed history). */
  acpLoadedAt: number;
}

export async function follow(set: ReplicaSet, replica: ServingCli, sessionId: string, cleanups: Cleanups): Promise<Followers> {
  const ask = await set.client(replica);
  await ask.request("initialize", { client: { name: "follower", version: "1" } });
  await ask.request("session/subscribe", { sessionId });
  const codex = await CodexTestClient.websocket(replica.baseUrl.replace("http://", "ws://"));
  cleanups.push(() => codex.socket.terminate());
  codex.socket.on("error", () => undefined);
  await codex.initialize();
  await codex.request("thread/resume", { threadId: sessionId });
  const acp = await RawAcpClient.connect(`${replica.baseUrl.replace("http://", "ws://")}/acp`);
  cleanups.push(() => acp.socket.terminate());
  acp.socket.on("error", () => undefined);
  await acp.initialize();
  const loaded = await acp.request("session/load", { sessionId, cwd: repoRoot, mcpServers: [] });
  expect(loaded.error).toBeUndefined();
  return { replica, ask, codex, acp, acpLoadedAt: acp.received.indexOf(loaded) };
}

/** The reply the test host streams for a message. */
export const replyTo = (content: string) => `You said: ${content}`;

/** Resolves once every follower saw the turn end (Ask terminal, Codex turn/completed, ACP the whole reply). */
export async function turnReached(followers: Followers, sessionId: string, turnId: string, content: string, timeoutMs = 30_000): Promise<void> {
  const where = followers.replica.baseUrl;
  const outcomes = await Promise.allSettled([
    followers.ask.waitFor(() => terminalOf(followers.ask.eventsOf(sessionId), turnId) !== undefined, `the end of turn ${turnId}`, timeoutMs),
    followers.codex.turnCompleted(turnId, timeoutMs).catch(() => {
      throw new Error(`Codex follower on ${where} never got turn/completed of ${turnId}`);
    }),
    followers.acp.next(() => acpTurnEnded(followers, sessionId, turnId, content), timeoutMs).catch(() => {
      throw new Error(`ACP follower on ${where} never got "${replyTo(content).slice(0, 40)}…"; it got: ${acpText(followers).slice(-300)}; its Ask neighbour saw ${followers.ask.eventsOf(sessionId).map((e) => `${e.seq}:${e.type}`).filter((t) => !t.endsWith("model.streaming")).join(" ")}`);
    }),
  ]);
  const failed = outcomes.flatMap((o) => (o.status === "rejected" ? [String((o.reason as Error).message ?? o.reason).slice(0, 1500)] : []));
  if (failed.length) throw new Error(failed.join("\n"));
}

/**
 * Whether an ACP follower saw the turn end: the whole reply arrived, or, where the replica resynced
 * the session mid-turn (its Ask neighbour got a `session.reset` after the turn started: the rest
 * of the reply then exists only in the host's snapshot, never as chunks), the `usage_update` that
 * ends a turn arrived after the last chunk.
 */
function acpTurnEnded(followers: Followers, sessionId: string, turnId: string, content: string): boolean {
  if (acpText(followers).includes(replyTo(content))) return true;
  if (!resetDuring(followers, sessionId, turnId)) return false;
  const updates = followers.acp.received.map((m) => m.method === "session/update" && m.params.update.sessionUpdate);
  return updates.lastIndexOf("usage_update") > updates.lastIndexOf("agent_message_chunk");
}

/** Whether the Ask follower on the same replica got a `session.reset` after the turn started. */
function resetDuring(followers: Followers, sessionId: string, turnId: string): boolean {
  const events = followers.ask.eventsOf(sessionId);
  const start = events.findIndex((e) => e.type === "turn.started" && (e.payload as { turnId: string }).turnId === turnId);
  return start >= 0 && events.slice(start).some((e) => e.type === "session.reset");
}

/** The agent_message_chunk text an ACP follower got after loading the session. */
export function acpText(followers: Followers): string {
  return followers.acp.received
    .slice(followers.acpLoadedAt + 1)
    .filter((m) => m.method === "session/update" && m.params.update.sessionUpdate === "agent_message_chunk")
    .map((m) => m.params.update.content.text)
    .join("");
}

const occurrences = (text: string, part: string) => text.split(part).length - 1;

/**
 * Every turn ended exactly once for every follower: Ask terminal events once each (with no gap or
 * duplicate in seqs, seqs starting over only after a `session.reset`), Codex `turn/completed` once
 * each, ACP each reply's text once.
 */
export function expectEachTurnOnce(followers: Followers, sessionId: string, turns: ReadonlyArray<{ turnId: string; content: string }>): void {
  const where = followers.replica.baseUrl;
  const events = followers.ask.eventsOf(sessionId);
  expectNoGapOrDuplicate(events);
  // Across a reset too: a turn that started before it ends once, after it.
  expectOneTerminalPerTurn(events);
  for (const { turnId } of turns) {
    const ends = events.filter((e) => terminalOf([e], turnId) !== undefined);
    expect(ends.length, `Ask terminal events of turn ${turnId} on ${where}`).toBe(1);
  }
  for (const { turnId } of turns) expect(followers.codex.notifications("turn/completed").filter((m) => m.params.turn.id === turnId), `Codex turn/completed of ${turnId} on ${where}`).toHaveLength(1);
  expect(followers.codex.invalid).toEqual([]);
  const text = acpText(followers);
  for (const { turnId, content } of turns) {
    if (!resetDuring(followers, sessionId, turnId)) {
      expect(occurrences(text, replyTo(content)), `ACP text of "${content.slice(0, 30)}" on ${where}`).toBe(1);
      continue;
    }
    // Cut short by a reset (what streamed meanwhile may be gone with the store's data), nothing of it came twice:
    // each word of the reply that no other turn's reply has is there at most once.
    const others = turns.filter((t) => t.turnId !== turnId).map((t) => replyTo(t.content)).join(" ").split(" ");
    const words = content.split(" ").filter((w, i, all) => /^\w+$/.test(w) && all.indexOf(w) === i && all.lastIndexOf(w) === i && !others.includes(w) && !["You", "said"].includes(w));
    for (const word of words) expect(text.match(new RegExp(`\\b${word}\\b`, "g"))?.length ?? 0, `"${word}" in the ACP text on ${where}`).toBeLessThanOrEqual(1);
  }
}

/** Events of a subscription seen across a possible reset: after a `session.reset`, seqs start over. */
export function expectNoGapOrDuplicate(events: readonly Event[]): void {
  let previous: number | undefined;
  for (const event of events) {
    if (previous !== undefined && event.type !== "session.reset") expect(event.seq, `event after seq ${previous}`).toBe(previous + 1);
    previous = event.seq;
  }
}

/** What a request got: its error (a rejection), or the ACP error object. */
async function failureOf(request: Promise<unknown>): Promise<{ code: number; message: string } | undefined> {
  return request.then(
    (answer) => (answer as { error?: { code: number; message: string } } | undefined)?.error,
    (error: unknown) => (error instanceof RpcError ? { code: error.code, message: error.message } : { code: 0, message: String(error) }),
  );
}

/**
 * A request needing the store in each dialect (Ask session/list, Codex thread/list, ACP
 * session/list), all answered with -32012 naming the store, never the store library's words.
 */
export async function expectStoreUnavailable(followers: Followers): Promise<void> {
  const failures = await Promise.all([
    failureOf(followers.ask.request("session/list", {})),
    failureOf(followers.codex.request("thread/list", {})),
    failureOf(followers.acp.request("session/list", {})),
  ]);
  for (const [dialect, failure] of ["Ask", "Codex", "ACP"].map((d, i) => [d, failures[i]] as const)) {
    expect(failure, `${dialect} on ${followers.replica.baseUrl}`).toMatchObject({ code: -32012, message: expect.stringMatching(/store unavailable/) });
    expect(failure!.message).not.toMatch(/maxRetriesPerRequest|Command timed out|ioredis|ECONNREFUSED|Connection is closed/i);
  }
}
