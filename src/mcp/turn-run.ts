import { randomUUID } from "node:crypto";
import type { Event } from "../../generated/ask-v1.0.js";
import type { TauStartOutput } from "../../generated/mcp-v2025-11-25.js";
import type { TurnOutcome } from "../../generated/tau-v18.js";
import type { SessionRecord } from "../bridge/session-registry.js";
import type { Log } from "../shared/log.js";
import { TauResponseError, type TauUpstream } from "../tau/upstream.js";
import { ToolFailure } from "./errors.js";

/** How long a settled turn's last events get to arrive after Tau answered `session.submit`. */
const SETTLE_GRACE_MS = 1000;

export interface TurnRunOptions {
  record: SessionRecord;
  upstream: Pick<TauUpstream, "request">;
  text: string;
  /** Told of each step of the turn: the reply as it streams, what it waits for. */
  progress?(message: string): void;
  /** The call running the turn may be cancelled: hands over what interrupts it. */
  cancellable(interrupt: () => void): void;
  log?: Log;
}

/**
 * One turn of a session run for a tools/call (tau, tau-reply): `session.submit`, the session's
 * events followed meanwhile — the reply's text as it streams, approvals and questions it waits
 * for — and the turn's report once it has ended. A session running another client's turn is
 * refused (the model is told to wait or interrupt), never queued behind it unseen.
 */
export async function runTurn(options: TurnRunOptions): Promise<TauStartOutput> {
  const { record, upstream, text } = options;
  const { sessionId } = record;
  if (record.hub.activeTurnId !== undefined) {
    throw new ToolFailure(`a turn is already running in session ${sessionId}: wait for it to end (tau-history shows it), or interrupt it with tau-interrupt`);
  }
  const turnId = randomUUID();
  let started = false;
  let ended: Event | undefined;
  let streamed = "";
  let endedNow!: () => void;
  const endedPromise = new Promise<void>((resolve) => (endedNow = resolve));
  const unsubscribe = record.hub.log.subscribe((event) => {
    switch (event.type) {
      case "turn.started":
        if (event.payload.turnId === turnId) started = true;
        return;
      case "model.streaming":
        if (!started || ended) return;
        streamed += event.payload.delta;
        return options.progress?.(event.payload.delta);
      case "approval.required":
        if (started && !ended) options.progress?.(`[waiting for approval ${event.payload.id}: ${event.payload.toolName} ${JSON.stringify(event.payload.args ?? {})}]`);
        return;
      case "input.requested":
        if (started && !ended) options.progress?.(`[waiting for an answer to question ${event.payload.id}: ${event.payload.prompt}]`);
        return;
      case "plan.proposed":
        if (started && !ended) options.progress?.(`[waiting for approval of plan ${event.payload.id}]`);
        return;
      case "turn.completed":
      case "turn.failed":
      case "turn.aborted":
        if (event.payload.turnId !== turnId) return;
        ended = event;
        return endedNow();
      default:
        return;
    }
  });
  let interruptSent = false;
  options.cancellable(() => {
    if (interruptSent) return;
    interruptSent = true;
    upstream.request("session.interrupt", { sessionId }).catch((error: unknown) => options.log?.("warn", "session.interrupt failed", { sessionId, error: String(error) }));
  });
  try {
    let outcome: TurnOutcome;
    try {
      ({ turn: outcome } = await upstream.request("session.submit", { sessionId, text, historyEntryId: turnId }));
    } catch (error) {
      if (error instanceof TauResponseError && error.code === "busy") {
        throw new ToolFailure(`session ${sessionId} is busy with another client's turn: wait for it to end, or interrupt it with tau-interrupt`);
      }
      throw error;
    }
    // Tau answered: its last deltas are normally already in, give them a moment otherwise.
    await Promise.race([endedPromise, delay(SETTLE_GRACE_MS)]);
    return report(sessionId, turnId, outcome, ended, streamed);
  } finally {
    unsubscribe();
  }
}

function report(sessionId: string, turnId: string, outcome: TurnOutcome, ended: Event | undefined, streamed: string): TauStartOutput {
  const completed = ended?.type === "turn.completed" ? ended.payload : undefined;
  const text = completed?.response ?? streamed;
  const usage = completed && {
    ...(completed.inputTokens !== undefined ? { inputTokens: completed.inputTokens } : {}),
    ...(completed.outputTokens !== undefined ? { outputTokens: completed.outputTokens } : {}),
    ...(completed.cost !== undefined ? { cost: completed.cost } : {}),
  };
  const base = { sessionId, turnId, status: outcome.status, text, ...(usage && Object.keys(usage).length ? { usage } : {}) };
  switch (outcome.status) {
    case "completed":
    case "aborted":
      return { ...base, stopReason: outcome.stopReason };
    case "failed":
      return { ...base, stopReason: outcome.stopReason, error: outcome.errorMessage ?? (ended?.type === "turn.failed" ? ended.payload.error : "the turn failed") };
    case "blocked":
      return { ...base, error: outcome.message };
  }
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms).unref?.());
}
