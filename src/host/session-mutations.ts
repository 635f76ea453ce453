import { randomUUID } from "node:crypto";
import type {
  CompactionMode,
  Operation,
  Reasoning,
  SessionCompactResult,
  SessionRecordResult,
  SessionReloadResult,
  SessionRewindResult,
  SettingsUpdateResult,
  Snapshot,
} from "../../generated/tau-v18.js";
import { catalogCounts, personaById, settingsWith } from "./catalog.js";
import { hasCompactableHistory, planCompaction } from "./compaction.js";
import { userMessageRecord } from "./conversation.js";
import { PatchBuilder } from "./patch-builder.js";
import { busy, invalidRequest, requestFailed } from "./protocol-error.js";
import { planRewind } from "./rewind.js";
import type { SessionRuntime } from "./session-runtime.js";

/**
 * The serialized session mutations of spec §4.2, §4.4 and §4.5. Context-replacing ones (record,
 * setPersona, reload, compact) interrupt the turn and reject pending input; settings changes and
 * rewind never interrupt.
 */

export function recordUserMessage(session: SessionRuntime, text: string, historyEntryId?: string): Promise<SessionRecordResult> {
  session.resolveEntryId(historyEntryId); // refuse a reused id before interrupting anything
  return session.replaceContext("user message added", () => {
    const entryId = session.resolveEntryId(historyEntryId);
    const builder = new PatchBuilder(session.snapshot).add({ type: "message.append", message: userMessageRecord(entryId, text) }).messageItem(entryId);
    session.state.commit({ type: "user-message" }, builder.changes);
    session.addHistoryEntry(entryId);
    return { snapshot: session.snapshot, userHistoryEntryId: entryId };
  });
}

export function setReasoning(session: SessionRuntime, reasoning: Reasoning): Promise<SettingsUpdateResult> {
  return session.serialize(() => updateSettings(session, { reasoning }));
}

export function setAutoCompactThreshold(session: SessionRuntime, thresholdTokens: number | null): Promise<SettingsUpdateResult> {
  return session.serialize(() => updateSettings(session, { autoCompactThresholdTokens: thresholdTokens }));
}

function updateSettings(session: SessionRuntime, update: Parameters<typeof settingsWith>[1]): SettingsUpdateResult {
  const settings = settingsWith(session.snapshot.settings, update);
  session.state.commit({ type: "configuration" }, [{ type: "settings.set", settings }]);
  return { revision: session.snapshot.revision, settings };
}

export function setPersona(session: SessionRuntime, personaId: string): Promise<Snapshot> {
  if (!personaById(personaId)) throw unknownPersona(personaId);
  return session.replaceContext("session persona changed", () => {
    const persona = personaById(personaId)!;
    const base = session.snapshot.messages[0];
    session.state.commit({ type: "configuration" }, [
      { type: "settings.set", settings: settingsWith(session.snapshot.settings, { personaId }) },
      { type: "message.replace", message: { ...base, message: { role: "system", content: persona.systemPrompt, timestamp: Date.now() } } },
    ]);
    return session.snapshot;
  });
}

export const unknownPersona = (personaId: string) => requestFailed(`unknown persona: ${personaId}`);

export function reload(session: SessionRuntime): Promise<SessionReloadResult> {
  return session.replaceContext("session reloaded", () => {
    const operation = startOperation(session, "reload");
    finishOperation(session, { ...operation, status: "succeeded", finishedAt: Date.now() });
    return { snapshot: session.snapshot, warnings: [], counts: catalogCounts() };
  });
}

export function compact(session: SessionRuntime, mode: CompactionMode, guidance?: string): Promise<SessionCompactResult> {
  return session.replaceContext("session compacted", () => {
    if (!hasCompactableHistory(session.snapshot)) {
      const startedAt = Date.now();
      const skipped: Operation = { id: `op-${randomUUID()}`, kind: "manual-compaction", startedAt, status: "skipped", finishedAt: startedAt, reason: "no-eligible-history" };
      session.state.commit({ type: "maintenance" }, new PatchBuilder(session.snapshot).add({ type: "operation.set", operation: skipped }).operationItem(skipped.id).changes);
      throw invalidRequest("nothing to compact: the session has no history yet");
    }
    const operation = startOperation(session, "manual-compaction");
    const plan = planCompaction(session.snapshot, { ...operation, status: "succeeded", finishedAt: Date.now() }, mode, guidance);
    session.state.reset(plan.cause, plan.snapshot);
    session.removeHistoryEntries([...session.historyEntries()]);
    return { snapshot: session.snapshot, compactionMessage: plan.compactionMessage, includedLastAssistant: plan.includedLastAssistant };
  });
}

export function rewind(session: SessionRuntime, historyEntryId: string): Promise<SessionRewindResult> {
  const refuse = () => busy("cannot rewind while session work is active or pending");
  if (session.hasWork) throw refuse();
  return session.serialize(() => {
    if (session.hasWork) throw refuse();
    const entryId = historyEntryId.trim();
    const plan = planRewind(session.snapshot, entryId, session.historyEntries());
    // Tau's rewind throws inside its handler for an entry it cannot rewind to: the generic failure, "rewind failed".
    if (!plan) throw requestFailed("rewind failed");
    session.state.reset(plan.cause, plan.snapshot);
    session.removeHistoryEntries(plan.removedEntryIds);
    return { snapshot: session.snapshot, historyEntryId: entryId, text: plan.text, removedEntryIds: plan.removedEntryIds };
  });
}

/**
 * Through the mutation queue, without touching the main turn (spec §4.6): the sub-agent's run is
 * interrupted and the answer waits until it has settled. `found` says whether the session has a
 * sub-agent of that id (one that is not running is found, with nothing to stop).
 */
export function interruptSubagent(session: SessionRuntime, subagentId: string): Promise<{ found: boolean }> {
  return session.serialize(async () => ({ found: await session.subagents.interrupt(subagentId) }));
}

function startOperation(session: SessionRuntime, kind: Operation["kind"]): Operation {
  const operation: Operation = { id: `op-${randomUUID()}`, kind, startedAt: Date.now(), status: "running" };
  session.state.commit({ type: "maintenance" }, new PatchBuilder(session.snapshot).add({ type: "operation.set", operation }).operationItem(operation.id).changes);
  return operation;
}

function finishOperation(session: SessionRuntime, operation: Operation): void {
  session.state.commit({ type: "maintenance" }, [{ type: "operation.set", operation }]);
}
