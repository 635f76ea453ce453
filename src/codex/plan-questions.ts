import type { Event } from "../../generated/ask-v1.0.js";
import { RemoteAsking, type ReverseRequester, type SessionInteractions } from "../bridge/interactions/index.js";
import type { Log } from "../shared/log.js";

/** What putting plans to a thread's connections needs of the thread. */
export interface PlanAsker {
  readonly threadId: string;
  readonly interactions: Pick<SessionInteractions, "shared">;
  /** The thread's connections as the core asks them (server-requests.ts: a plan is a question). */
  readonly requester: ReverseRequester;
  readonly log?: Log;
}

/**
 * A plan the agent proposed (submit_plan) is put to a thread's connections as it is proposed,
 * through the core's asking (remote-asking.ts): the first answer settles it like plan/approve or
 * plan/reject, and a decision made anywhere else withdraws the question. A connection that loads
 * the thread while a plan waits is asked about it by the core's late-joiner asking
 * (joiner-asking.ts), with the approvals and questions pending. Without a connection that can be
 * asked, a plan waits for a client of another dialect or the deadline.
 */
export class PlanQuestions {
  /** Plans put to the thread's connections as they were proposed, by interaction id. */
  private readonly offered = new Set<string>();
  private readonly asking: RemoteAsking;

  constructor(thread: PlanAsker) {
    this.asking = new RemoteAsking(thread.threadId, thread.requester, thread.interactions.shared, () => true, thread.log);
  }

  /** The session's events, as the thread hears them. */
  onEvent(event: Event): void {
    if (event.type === "plan.proposed" && !this.offered.has(event.payload.id)) {
      this.offered.add(event.payload.id);
      void this.asking.askPending([], [event.payload]);
    }
    this.asking.onEvent(event);
  }
}
