import type { Snapshot } from "../../../generated/tau-v18.js";

/**
 * What a session's delta translator (translator.ts) has reported, by id: the turns it started and
 * ended, the tools it announced and finished, the compactions it started and finished. Kept apart
 * with the one rule that rewrites it wholesale: taking over from a log another process wrote.
 */
export interface ReportMarks {
  readonly startedTurns: Set<string>;
  readonly endedTurns: Set<string>;
  readonly usedTools: Set<string>;
  readonly finishedTools: Set<string>;
  readonly startedOperations: Set<string>;
  readonly finishedOperations: Set<string>;
}

export const reportMarks = (): ReportMarks => ({
  startedTurns: new Set(),
  endedTurns: new Set(),
  usedTools: new Set(),
  finishedTools: new Set(),
  startedOperations: new Set(),
  finishedOperations: new Set(),
});

/**
 * Reopens in `marks` (which count `snapshot` as reported) what `reported`, the retained end of
 * the shared log, left open: see DeltaTranslator.resumingAfter.
 */
export function reopen(marks: ReportMarks, reported: ReadonlyArray<{ type: string; payload: unknown }>, snapshot: Snapshot): void {
  const started = new Set<string>();
  const ended = new Set<string>();
  const used = new Set<string>();
  const finished = new Set<string>();
  const compacting = new Set<string>();
  const compacted = new Set<string>();
  for (const event of reported) {
    const payload = event.payload as { turnId?: string; id?: string; operationId?: string };
    if (event.type === "turn.started" && payload.turnId) started.add(payload.turnId);
    else if ((event.type === "turn.completed" || event.type === "turn.failed" || event.type === "turn.aborted") && payload.turnId) ended.add(payload.turnId);
    else if (event.type === "tool.use" && payload.id) used.add(payload.id);
    else if (event.type === "tool.result" && payload.id) finished.add(payload.id);
    else if (event.type === "compaction.started" && payload.operationId) compacting.add(payload.operationId);
    else if (event.type === "compaction.completed" && payload.operationId) compacted.add(payload.operationId);
  }
  // Turns whose user message comes after that of the last turn the events mention happened
  // since: none of them was reported. With no turn mentioned, all were new only if the events
  // go back to the session's beginning.
  const order = new Map(snapshot.messages.map((record, index) => [record.id, index]));
  const mentioned = [...started, ...ended].map((turnId) => order.get(turnId) ?? -1);
  const reportedUpTo = mentioned.length > 0 ? Math.max(...mentioned) : reported.some((e) => e.type === "session.created") ? -1 : Infinity;
  for (const turn of Object.values(snapshot.turns)) {
    const turnId = turn.userHistoryEntryId;
    const unreported = !started.has(turnId) && (order.get(turnId) ?? -1) > reportedUpTo;
    if (started.has(turnId) && !ended.has(turnId)) marks.endedTurns.delete(turnId);
    else if (unreported || (turn.state === "running" && !started.has(turnId))) {
      marks.startedTurns.delete(turnId);
      marks.endedTurns.delete(turnId);
    }
  }
  for (const turnId of started) if (!ended.has(turnId)) marks.startedTurns.add(turnId);
  for (const id of used) if (!finished.has(id)) marks.finishedTools.delete(id);
  for (const id of used) marks.usedTools.add(id);
  for (const id of compacting) if (!compacted.has(id)) marks.finishedOperations.delete(id);
  for (const id of compacting) marks.startedOperations.add(id);
}
