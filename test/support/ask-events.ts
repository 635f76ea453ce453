import { expect } from "vitest";
import type { Event } from "../../generated/ask-v1.0.js";
import type { AskTestClient } from "./ask-client.js";

/** Assertions about Ask event streams shared by the end-to-end suites. */

const TERMINAL = new Set(["turn.completed", "turn.failed", "turn.aborted"]);

/** Every started turn ended exactly once, and nothing ended that never started. */
export function expectOneTerminalPerTurn(events: readonly Event[]): void {
  const started = events.filter((e) => e.type === "turn.started").map((e) => (e.payload as { turnId: string }).turnId);
  expect(new Set(started).size, "each turn starts once").toBe(started.length);
  const ends = new Map<string, string[]>();
  for (const e of events) {
    if (!TERMINAL.has(e.type)) continue;
    const turnId = (e.payload as { turnId: string }).turnId;
    ends.set(turnId, [...(ends.get(turnId) ?? []), e.type]);
  }
  for (const turnId of started) expect(ends.get(turnId)?.length, `terminal events of turn ${turnId}: ${ends.get(turnId)?.join(", ") ?? "none"}`).toBe(1);
  for (const turnId of ends.keys()) expect(started, `turn ${turnId} ended without starting`).toContain(turnId);
}

/** Seqs of one subscription: strictly increasing by one from `first` (no duplicate, no gap). */
export function expectContiguous(events: readonly Event[], first = 1): void {
  expect(events.map((e) => e.seq)).toEqual(events.map((_, i) => first + i));
}

export const terminalOf = (events: readonly Event[], turnId: string): Event | undefined =>
  events.find((e) => TERMINAL.has(e.type) && (e.payload as { turnId?: string }).turnId === turnId);

/** Resolves with the turn's terminal event once it arrived. */
export async function waitForTerminal(client: AskTestClient, sessionId: string, turnId: string): Promise<Event> {
  await client.waitFor(() => terminalOf(client.eventsOf(sessionId), turnId) !== undefined, `the end of turn ${turnId}`);
  return terminalOf(client.eventsOf(sessionId), turnId)!;
}

/** initialize, session/create and session/subscribe (replay from 0); returns the session id. */
export async function openSession(client: AskTestClient, options: { create?: Record<string, unknown>; capabilities?: string[] } = {}): Promise<string> {
  await client.request("initialize", { client: { name: "e2e", version: "1" }, ...(options.capabilities ? { capabilities: options.capabilities } : {}) });
  const { session } = await client.request("session/create", options.create ?? {});
  await client.request("session/subscribe", { sessionId: session.sessionId });
  return session.sessionId as string;
}

/** Sends a message and waits for its turn to end; returns the send result and the terminal event. */
export async function runTurn(client: AskTestClient, sessionId: string, content: string) {
  const sent = await client.request("session/send", { sessionId, content });
  const terminal = await waitForTerminal(client, sessionId, sent.turnId);
  return { sent, terminal };
}

export const payloadsOf = <T = Record<string, unknown>>(events: readonly Event[], type: string): T[] =>
  events.filter((e) => e.type === type).map((e) => e.payload as T);

/** Polls `condition` (for state that no message announces, e.g. the bridge connection's). */
export async function eventually(condition: () => boolean, what: string, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}
