import type { Receipt, SessionReceipts } from "./receipts.js";

/** What the replica that ends an approval another one left behind knows of its call: the receipt's facts, the interaction that asked and whom. */
export type LeftBehindCall = Omit<Receipt, "steps" | "interactionId"> & {
  /** The interaction that asked. */
  readonly id: string;
  /** Whom it was asked of (the receipt's `asked` step). */
  readonly whom: string;
};

/**
 * The receipt of a call whose approval the replica holding it left pending when it went away (a
 * killed process): that replica's receipt, kept in its memory until the call returned, is lost with
 * it, so the replica that takes the host over and ends the approval writes one from what the store
 * kept of it (the call, its digest, the rule, whom it was asked of). Its steps are stamped when it is
 * written, and it lists no votes: the votes the gone replica counted went with it, and says so.
 */
export function recordLeftBehind(receipts: SessionReceipts, call: LeftBehindCall, reason: string): void {
  const { sessionId, callId, tool, digest, policyVersion, rule } = call;
  receipts.propose({ sessionId, callId, tool, digest, policyVersion, ...(rule ? { rule } : {}) });
  receipts.asked(callId, call.id, call.whom);
  receipts.returned(callId, false, `cancelled: ${reason} (written by the replica that took the Tau host over: the votes counted on the one that held the call are not known)`);
}
