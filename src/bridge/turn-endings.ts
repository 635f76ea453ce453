import type { Event } from "../../generated/ask-v1.0.js";
import type { Log } from "../shared/log.js";
import type { TauUpstream } from "../tau/upstream.js";
import { draft } from "./event-draft.js";
import type { EventLog } from "./event-log.js";
import type { SessionRecord } from "./session-registry.js";

/**
 * Ending the turns still running when the gateway stops (the drain deadline): each session with a
 * running turn is interrupted upstream (`session.interrupt`), and every turn gets its terminal
 * event in the session's log before the clients' connections close — which every dialect turns
 * into its own words (Ask `turn.aborted`, Codex `turn/completed` with status `interrupted`, an ACP
 * prompt answered `cancelled`).
 *
 * Normally Tau reports the interrupted turn within milliseconds and the hub translates it as it
 * does any other. A host that does not answer within `budgetMs` (stalled, or unreachable) must not
 * leave clients with nothing but a closed connection, nor hold up the shutdown: the gateway then
 * writes `turn.aborted` itself, from what it knows — the turn was running and the gateway asked
 * for it to stop. That may be ahead of Tau (the turn could still be running there), which is why
 * it is only the fallback.
 */

/**
 * The time a shutdown gives the turns still running to end once they are interrupted (`turnsMs`),
 * then the requests that waited for them (an ACP prompt) to be answered (`answersMs`). Tau normally
 * reports an interrupted turn within milliseconds; the bound is for a host that does not, so the
 * shutdown stays inside the platform's grace period.
 */
export const SHUTDOWN_TURN_ENDING = { turnsMs: 800, answersMs: 200 } as const;

const TERMINAL = new Set<Event["type"]>(["turn.completed", "turn.failed", "turn.aborted"]);

export interface EndedTurns {
  /** Turns running when this started, each in a session that was interrupted upstream. */
  interruptedTurns: number;
  /** Of those, turns Tau did not report ended within the budget: their `turn.aborted` is the gateway's. */
  endedByGateway: number;
}

export async function endRunningTurns(
  records: readonly SessionRecord[],
  upstream: Pick<TauUpstream, "request">,
  budgetMs: number,
  log?: Log,
): Promise<EndedTurns> {
  const waiting = records.flatMap((record) => {
    const turnIds = new Set(record.hub.runningTurnIds);
    return turnIds.size > 0 ? [{ record, turnIds }] : [];
  });
  const interruptedTurns = waiting.reduce((sum, w) => sum + w.turnIds.size, 0);
  if (interruptedTurns === 0) return { interruptedTurns: 0, endedByGateway: 0 };

  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<void>((resolve) => (timer = setTimeout(resolve, budgetMs)));
  const endings = waiting.map(({ record, turnIds }) => turnsEnded(record.hub.log, turnIds, deadline).then((missing) => ({ record, missing })));
  for (const { record } of waiting) {
    upstream.request("session.interrupt", { sessionId: record.sessionId }).catch((error: unknown) =>
      log?.("warn", "session.interrupt at shutdown failed", { sessionId: record.sessionId, error: String(error) }),
    );
  }
  const ended = await Promise.all(endings);
  clearTimeout(timer);

  let endedByGateway = 0;
  for (const { record, missing } of ended) {
    for (const turnId of missing) {
      endedByGateway += 1;
      log?.("warn", "Tau did not report the interrupted turn ended in time: the gateway reports it aborted", { sessionId: record.sessionId, turnId, budgetMs });
      record.hub.emit(draft("turn.aborted", { turnId }));
    }
  }
  return { interruptedTurns, endedByGateway };
}

/**
 * Resolves once each of `turnIds` has its terminal event in `log`, or when `deadline` comes, with
 * the turns still missing one (in the order given).
 */
export function turnsEnded(log: Pick<EventLog, "subscribe">, turnIds: Iterable<string>, deadline: Promise<unknown>): Promise<string[]> {
  const waiting = new Set(turnIds);
  if (waiting.size === 0) return Promise.resolve([]);
  return new Promise((resolve) => {
    let done = false;
    const finish = () => {
      if (done) return;
      done = true;
      stop();
      resolve([...waiting]);
    };
    const stop = log.subscribe((event) => {
      if (!TERMINAL.has(event.type)) return;
      waiting.delete((event.payload as { turnId?: string }).turnId ?? "");
      if (waiting.size === 0) finish();
    });
    void deadline.then(finish);
  });
}
