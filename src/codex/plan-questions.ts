import type { Event } from "../../generated/ask-v1.0.js";
import type { ServerRequests } from "../../generated/codex-v2.js";
import type { PendingPlan, SessionInteractions } from "../bridge/interactions/index.js";
import type { Log } from "../shared/log.js";
import type { CodexPeer } from "./peer.js";
import { answerText } from "./question-answers.js";

/** What putting plans to a thread's connections needs of the thread. */
export interface PlanAsker {
  readonly threadId: string;
  readonly interactions: Pick<SessionInteractions, "shared">;
  /** Follows the session's events; returns the way to stop. */
  follow(listener: (event: Event) => void): () => void;
  /** The thread's ask(): the first answer of the connections `accepts` picks, in the current turn. */
  ask(
    method: "item/tool/requestUserInput",
    params: (turnId: string) => ServerRequests["item/tool/requestUserInput"]["params"],
    signal: AbortSignal,
    accepts: (peer: CodexPeer) => boolean,
  ): Promise<unknown>;
  readonly log?: Log;
}

const PLAN_QUESTION_ID = "plan";
const APPROVE_PLAN = "Approve";

/** Only connections that take experimental server requests are asked (item/tool/requestUserInput is one). */
const takesQuestions = (peer: CodexPeer) => peer.client.experimentalApi;

/**
 * A plan the agent proposed (submit_plan) is put to a thread's connections as a question (approve
 * or not); the first answer settles it like plan/approve or plan/reject, and a decision made
 * anywhere else withdraws the question. A connection that loads the thread while a plan waits is
 * asked about it at once; plans proposed after it loaded reach it as they reach everyone. Without a
 * connection that can be asked, a plan waits for a client of another dialect or the deadline.
 */
export class PlanQuestions {
  /** Plans put to the thread's connections as they were proposed, by interaction id. */
  private readonly offered = new Set<string>();

  constructor(private readonly thread: PlanAsker) {}

  /** The session's events, as the thread hears them. */
  onEvent(event: Event): void {
    if (event.type !== "plan.proposed" || this.offered.has(event.payload.id)) return;
    this.offered.add(event.payload.id);
    this.put(event.payload, takesQuestions);
  }

  /** `peer` loaded the thread just now (call it in the same event-loop turn as the attach). */
  askJoining(peer: CodexPeer): void {
    if (!takesQuestions(peer)) return;
    // From here on a plan proposed is put to it with everyone; one decided meanwhile is not asked about.
    const offeredBefore = new Set(this.offered);
    const decided = new Set<string>();
    const stop = this.thread.follow((event) => {
      if ((event.type === "plan.approved" || event.type === "plan.rejected") && event.payload.id) decided.add(event.payload.id);
    });
    this.thread.interactions.shared.plans().then(
      (plans) => {
        stop();
        for (const plan of plans) {
          const offeredSince = this.offered.has(plan.id) && !offeredBefore.has(plan.id);
          if (!offeredSince && !decided.has(plan.id)) this.put(plan, (p) => p === peer && takesQuestions(p));
        }
      },
      (error: unknown) => {
        stop();
        this.thread.log?.("warn", "listing pending plans for a connection that loaded the thread failed", { threadId: this.thread.threadId, error: String(error) });
      },
    );
  }

  private put({ id, plan }: PendingPlan, accepts: (peer: CodexPeer) => boolean): void {
    const settled = new AbortController();
    const ended = this.thread.follow((event) => {
      if ((event.type === "plan.approved" || event.type === "plan.rejected") && event.payload.id === id) {
        ended();
        settled.abort();
      }
    });
    void this.thread
      .ask(
        "item/tool/requestUserInput",
        (turnId) => ({
          threadId: this.thread.threadId,
          turnId,
          itemId: id,
          isBlocking: true,
          questions: [
            {
              id: PLAN_QUESTION_ID,
              header: "Plan",
              question: `Approve this plan?\n\n${plan}`,
              isOther: true,
              isSecret: false,
              options: [
                { label: APPROVE_PLAN, description: "Carry it out" },
                { label: "Reject", description: "Do not carry it out; the answer goes to the agent" },
              ],
            },
          ],
        }),
        settled.signal,
        accepts,
      )
      .then((answer) => {
        const response = answerText(answer, PLAN_QUESTION_ID);
        if (response === undefined || settled.signal.aborted) return;
        const plans = this.thread.interactions.shared;
        // This plan alone: another one proposed meanwhile has a question of its own.
        const decision = plans.decidePlan(id, response === APPROVE_PLAN ? { action: "approve" } : { action: "reject", ...(response === "Reject" ? {} : { feedback: response }) });
        // Settled meanwhile by someone else (on any replica): the first resolution wins.
        return decision.catch(() => undefined);
      });
  }
}
