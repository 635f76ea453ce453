import { isDeepStrictEqual } from "node:util";
import type { Event } from "../../../generated/ask-v1.0.js";
import type { AskTestClient } from "../../support/ask-client.js";

/**
 * What a relay that resumes losslessly owes its client after a case, whatever the faults: each
 * request answered exactly once; each marked prompt run by Tau exactly once; the client's event
 * stream of the session every event once, in order, as the gateway has it (so each character of
 * each reply once).
 */

const TERMINAL = new Set(["turn.completed", "turn.failed", "turn.aborted"]);

/** Every turn the session started has ended, and at least one did. */
export function idle(events: readonly Event[]): boolean {
  const started = events.filter((e) => e.type === "turn.started").length;
  return started > 0 && events.filter((e) => TERMINAL.has(e.type)).length === started && TERMINAL.has(events.at(-1)!.type);
}

export const hasTerminal = (events: readonly Event[], turnId: string) => events.some((e) => TERMINAL.has(e.type) && (e.payload as { turnId?: string }).turnId === turnId);

/** Answers to each of `ids` in what the client received: exactly one each, and none to an id it never used. */
export function answerProblems(received: readonly unknown[], ids: readonly number[], lastId: number): string[] {
  const problems: string[] = [];
  const counts = new Map<unknown, number>();
  for (const m of received as Array<Record<string, unknown>>) {
    if ("method" in m || !("id" in m)) continue;
    counts.set(m.id, (counts.get(m.id) ?? 0) + 1);
    if (typeof m.id !== "number" || m.id < 1 || m.id > lastId) problems.push(`an answer to id ${JSON.stringify(m.id)}, which the client never used: ${JSON.stringify(m).slice(0, 300)}`);
  }
  for (const id of ids) if (counts.get(id) !== 1) problems.push(`request ${id} got ${counts.get(id) ?? 0} answers, expected exactly 1`);
  return problems;
}

/** Each marker once in the session's user messages as Tau has them. */
export function runOnceProblems(userMessages: readonly string[], markers: readonly string[]): string[] {
  const told = userMessages.join("\n");
  return markers.flatMap((marker) => {
    const times = told.split(marker).length - 1;
    return times === 1 ? [] : [`the prompt marked ${marker} reached Tau ${times} times, expected exactly once (user messages: ${JSON.stringify(userMessages).slice(0, 600)})`];
  });
}

/** The client's events of the session: seqs 1, 2, 3… and each the gateway's own event of that seq. */
export function streamProblems(client: readonly Event[], gateway: readonly Event[]): string[] {
  const problems: string[] = [];
  const seqs = client.map((e) => e.seq);
  const bad = seqs.findIndex((seq, i) => seq !== i + 1);
  if (bad >= 0) problems.push(`the client's event seqs are not 1, 2, 3…: ${seqs.slice(Math.max(0, bad - 3), bad + 4).join(", ")} around position ${bad} (a duplicate or a gap)`);
  if (client.length < gateway.length) problems.push(`the client saw ${client.length} events of the session, the gateway has ${gateway.length}`);
  const differs = client.findIndex((e, i) => i < gateway.length && !isDeepStrictEqual(e, gateway[i]));
  if (differs >= 0) problems.push(`the client's event ${differs + 1} differs from the gateway's: ${JSON.stringify(client[differs]).slice(0, 300)} vs ${JSON.stringify(gateway[differs]).slice(0, 300)}`);
  const streamed = (events: readonly Event[]) =>
    events
      .filter((e) => e.type === "model.streaming")
      .map((e) => (e.payload as { delta: string }).delta)
      .join("");
  // Over the events both have: the gateway's log is held to its length when the client caught up,
  // and what reached the client after that (a turn started later) is not in it.
  const common = Math.min(client.length, gateway.length);
  const [seen, logged] = [streamed(client.slice(0, common)), streamed(gateway.slice(0, common))];
  if (seen !== logged) problems.push(`the streamed text the client saw is not the gateway's: ${JSON.stringify(seen).slice(0, 300)} vs ${JSON.stringify(logged).slice(0, 300)}`);
  return problems;
}

/** Waits for `predicate` on `client`'s messages; resolves with a problem (instead of throwing) when it times out. */
export const waitOrProblem = (client: AskTestClient, predicate: () => boolean, what: string, timeoutMs: number): Promise<string[]> =>
  client.waitFor(predicate, what, timeoutMs).then(
    () => [],
    (err: Error) => [err.message.slice(0, 1_000)],
  );
