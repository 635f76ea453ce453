import type { FinishedSpan, SpanAttributes } from "../../../shared/tracing.js";
import type { Receipt } from "./receipts.js";

/**
 * A finished receipt as an OpenTelemetry span (when the gateway traces): `approval receipt` from
 * its proposal to its result, its attributes the call's, each step an event at its time.
 */
export function receiptSpan(receipt: Receipt): FinishedSpan {
  const times = receipt.steps.map((step) => Date.parse(step.at));
  return {
    name: "approval receipt",
    attributes: {
      "session.id": receipt.sessionId,
      "tau.call_id": receipt.callId,
      "tau.tool": receipt.tool,
      "approval.digest": receipt.digest,
      "approval.policy_version": receipt.policyVersion,
      "approval.rule": receipt.rule?.name,
      "approval.interaction_id": receipt.interactionId,
    },
    startTime: times[0]!,
    endTime: times[times.length - 1]!,
    events: receipt.steps.map(({ step, at, ...rest }) => ({ name: step, time: Date.parse(at), attributes: eventAttributes(rest) })),
  };
}

/** A step's details as event attributes: a list (the approvers) as its members joined by ", ". */
function eventAttributes(details: object): SpanAttributes {
  return Object.fromEntries(Object.entries(details).map(([key, value]) => [key, Array.isArray(value) ? value.join(", ") : (value as SpanAttributes[string])]));
}
