import type {
  InteractionRequestPermissionParams,
  InteractionRequestPermissionResult,
  InteractionRequestUserInputParams,
  InteractionRequestUserInputResult,
} from "../../../generated/ask-v1.0.js";
import type { SessionPrincipal } from "../session-principal.js";

/** A plan put to clients for approval: its interaction id and its text. */
export interface PlanApprovalParams {
  readonly sessionId: string;
  readonly interactionId: string;
  readonly plan: string;
}

/**
 * What came of putting a question (ask_user) to a client, in no dialect's words: its answer, or
 * that the user will not or cannot answer (`declined`, with why: an ACP or MCP form declined or
 * dismissed, an editor that cannot show questions, a Codex answer that leaves the question out).
 * A declined question goes unanswered at once: Tau's client-tool channel gets the call's failure
 * (`session.clientTool.result` with `ok: false` and the reason), so the model carries on without
 * the answer instead of waiting for the deadline. Ask's `interaction/requestUserInput` result is
 * the first shape (Ask clients decline with `interaction/decline`).
 */
export type UserInputOutcome = InteractionRequestUserInputResult | { declined: string };

/** A client's decision on a plan, in no dialect's words (as SharedAnswers.decidePlan takes it). */
export type PlanApprovalResult = { action: "approve" } | { action: "reject"; feedback?: string };

/**
 * Counts one client's answer to a permission request, given with who gave it (its principal; none
 * on a gateway without tokens): resolves with true when the answer settled the approval, false
 * when the asking must go on for the other clients — the answer was a vote towards a consensus
 * (`count` of a policy rule), or it counts for nothing (its principal may not decide this one).
 */
export type PermissionVote = (answer: InteractionRequestPermissionResult, principal: SessionPrincipal | undefined) => Promise<boolean>;

/**
 * What a requester resolves one client's answer with: the answer itself without `vote`, else the
 * answer once `vote` says it settled the approval, and undefined (no decision: the others are still
 * asked) when it was a vote or counted for nothing. Every requester puts each answer through this.
 */
export async function counted(
  answer: InteractionRequestPermissionResult | undefined,
  principal: SessionPrincipal | undefined,
  vote: PermissionVote | undefined,
): Promise<InteractionRequestPermissionResult | undefined> {
  if (answer === undefined || !vote) return answer;
  return (await vote(answer, principal)) ? answer : undefined;
}

/**
 * The way an interaction asks connected clients directly (app-server interop reverse requests).
 * Each dialect that answers reverse requests implements it over its client connections, and the
 * set below asks them all; interactions only see answers.
 */
export interface ReverseRequester {
  /**
   * Sends the reverse request to every subscribed connection of the session that opted in
   * (initialize capabilities include "reverseRequests"); resolves with the first answer, or
   * undefined if nobody can answer. With `vote`, each answer is put through it as it comes
   * (`counted`): a client whose answer was only a vote has its own request settled, and the others
   * stay asked until one answer settles the approval or `signal` withdraws them.
   */
  requestPermission(
    sessionId: string,
    params: InteractionRequestPermissionParams,
    signal: AbortSignal,
    vote?: PermissionVote,
  ): Promise<InteractionRequestPermissionResult | undefined>;
  requestUserInput(
    sessionId: string,
    params: InteractionRequestUserInputParams,
    signal: AbortSignal,
  ): Promise<UserInputOutcome | undefined>;
  /** A plan the agent proposed (submit_plan), for approval; undefined if nobody can answer (a dialect without a way to ask about plans). */
  requestPlanApproval(sessionId: string, params: PlanApprovalParams, signal: AbortSignal): Promise<PlanApprovalResult | undefined>;
}

/**
 * The ways interactions reach clients directly, one per dialect that answers reverse requests:
 * each is asked, and the first answer wins. An interaction waits for an answer from any client,
 * whatever dialect it speaks; nobody being able to answer is `undefined`, as from one requester.
 */
export class ReverseRequesterSet implements ReverseRequester {
  private readonly members = new Set<ReverseRequester>();

  /** Adds a requester; returns the function that removes it. */
  add(requester: ReverseRequester): () => void {
    this.members.add(requester);
    return () => this.members.delete(requester);
  }

  /** Each member counts its own clients' answers with `vote` (so each answer is counted once); the first that settles the approval is the answer. */
  requestPermission(...args: Parameters<ReverseRequester["requestPermission"]>) {
    return firstAnswer([...this.members].map((m) => m.requestPermission(...args).catch(() => undefined)));
  }

  requestUserInput(...args: Parameters<ReverseRequester["requestUserInput"]>) {
    return firstAnswer([...this.members].map((m) => m.requestUserInput(...args).catch(() => undefined)));
  }

  requestPlanApproval(...args: Parameters<ReverseRequester["requestPlanApproval"]>) {
    return firstAnswer([...this.members].map((m) => m.requestPlanApproval(...args).catch(() => undefined)));
  }
}

/**
 * The first answer among several askers that may each have none (`undefined`): resolves with the
 * first one that has an answer, or with undefined once every asker came back without one. Askers
 * must not reject; a failure is theirs to turn into an answer (a refusal) or into none.
 */
export function firstAnswer<T>(answers: ReadonlyArray<Promise<T | undefined>>): Promise<T | undefined> {
  if (answers.length === 0) return Promise.resolve(undefined);
  return new Promise<T | undefined>((resolve) => {
    let remaining = answers.length;
    for (const answer of answers) {
      void answer.then((value) => {
        remaining--;
        if (value !== undefined) resolve(value);
        else if (remaining === 0) resolve(undefined);
      });
    }
  });
}
