import type { ThreadItem, TokenUsageBreakdown, Turn, TurnError } from "../../generated/codex-v2.js";

/**
 * A turn as Codex reports it once it has ended (turn/completed), and the token usage counted at
 * its end (thread/tokenUsage/updated): the pure shapes the turn translator (turn-translator.ts)
 * fills in, kept apart from its bookkeeping. The running counterpart is running-turn.ts.
 */

export const zeroUsage = (): TokenUsageBreakdown => ({ totalTokens: 0, inputTokens: 0, cachedInputTokens: 0, outputTokens: 0, reasoningOutputTokens: 0 });

/** A turn's usage as `last`, added to the thread's running `total` (which it updates). */
export function addUsage(total: TokenUsageBreakdown, usage: { inputTokens: number; outputTokens: number }): TokenUsageBreakdown {
  const last: TokenUsageBreakdown = { ...zeroUsage(), inputTokens: usage.inputTokens, outputTokens: usage.outputTokens, totalTokens: usage.inputTokens + usage.outputTokens };
  for (const key of Object.keys(last) as Array<keyof TokenUsageBreakdown>) total[key] += last[key];
  return last;
}

/** The ended turn; `startedAt` (ms) when its start was seen, `summary` its last agent message. */
export function endedTurn(turnId: string, status: Turn["status"], error: TurnError | undefined, startedAt: number | undefined, summary: ThreadItem | undefined): Turn {
  const completedAt = Date.now();
  return {
    id: turnId,
    rootTurnId: turnId,
    // What the turn ended with, as Codex's summary view: its last agent message, when it wrote one.
    items: summary ? [summary] : [],
    itemsView: summary ? "summary" : "notLoaded",
    status,
    error: error ?? null,
    ...(startedAt === undefined ? {} : { startedAt: Math.floor(startedAt / 1000), completedAt: Math.floor(completedAt / 1000), durationMs: completedAt - startedAt }),
  };
}
