import type { SessionUpdate } from "../../generated/acp-v1.js";
import type { Snapshot } from "../../generated/tau-v18.js";
import { messageUsage } from "../bridge/message-content.js";
import { usdAmount } from "../shared/money.js";

/**
 * `usage_update` from a session's snapshot: `used` is what the latest committed assistant message
 * had in its context (its total tokens), `size` the model's context window, `cost` the session's
 * total so far. Nothing before the first committed answer.
 */
export function usageUpdate(snapshot: Snapshot): SessionUpdate[] {
  for (let i = snapshot.messages.length - 1; i >= 0; i--) {
    const record = snapshot.messages[i]!;
    const payload = record.message;
    if (record.state !== "committed" || payload.role !== "assistant" || !("usage" in payload) || !messageUsage(record)) continue;
    return [
      {
        sessionUpdate: "usage_update",
        used: payload.usage.totalTokens,
        size: snapshot.bootstrap.model.contextWindow,
        cost: { amount: usdAmount(snapshot.costTotal), currency: "USD" },
      },
    ];
  }
  return [];
}
