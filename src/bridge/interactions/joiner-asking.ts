import type { Event } from "../../../generated/ask-v1.0.js";
import type { Log } from "../../shared/log.js";
import type { EventLog } from "../event-log.js";
import { RemoteAsking } from "./remote-asking.js";
import type { ReverseRequester } from "./reverse-requester.js";
import type { SharedAnswers } from "./shared-answers.js";

/** What asking a joining client needs of a session's record. */
export interface JoinedSession {
  readonly sessionId: string;
  readonly hub: { readonly log: Pick<EventLog, "subscribe"> };
  readonly interactions: { readonly shared: SharedAnswers };
}

/**
 * A client that attaches to a session (Ask session/subscribe, Codex thread/resume, ACP
 * session/load) while approvals, questions or plans are pending was not among the clients asked
 * when they opened: it is asked about them at once, through `reverse`, a requester that reaches that client alone. Its answer goes into
 * the interaction store like any other (the first answer wins); a decision made elsewhere withdraws
 * its question (remote-asking.ts). What opens after it attached reaches it as it reaches every
 * client attached then. Stops following the session once each of its questions is settled.
 */
export function askJoiningClient(session: JoinedSession, reverse: ReverseRequester, log?: Log): void {
  // The joining client is attached now: interactions announced from here on ask it as they open.
  const askedAnyway = new Set<string>();
  const settled = new Set<string>();
  const asking = new RemoteAsking(session.sessionId, reverse, session.interactions.shared, () => true, log);
  const stop = session.hub.log.subscribe((event) => {
    asking.onEvent(event);
    const id = interactionId(event);
    if (id === undefined) return;
    if (event.type === "approval.required" || event.type === "input.requested" || event.type === "plan.proposed") askedAnyway.add(id);
    else settled.add(id);
  });
  const { shared } = session.interactions;
  Promise.all([shared.list(), shared.plans()]).then(
    ([pending, plans]) => {
      const unasked = <T extends { id: string }>(list: readonly T[]) => list.filter((i) => !askedAnyway.has(i.id) && !settled.has(i.id));
      return asking.askPending(unasked(pending), unasked(plans)).finally(stop);
    },
    (error: unknown) => {
      stop();
      log?.("warn", "listing pending interactions for a client that attached failed", { sessionId: session.sessionId, error: String(error) });
    },
  );
}

function interactionId(event: Event): string | undefined {
  switch (event.type) {
    case "approval.required":
    case "approval.updated":
    case "input.requested":
    case "input.resolved":
      return (event.payload as { id: string }).id;
    case "plan.proposed":
    case "plan.approved":
    case "plan.rejected":
      return event.payload.id || undefined;
    default:
      return undefined;
  }
}
