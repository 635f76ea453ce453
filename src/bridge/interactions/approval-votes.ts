import type { Log } from "../../shared/log.js";
import { errorText } from "../../shared/unknown-values.js";
import type { Deciders } from "../../store/session-roles.js";
import type { SessionPrincipal } from "../session-principal.js";
import type { InteractionRequestPermissionResult } from "../../../generated/ask-v1.0.js";
import { decisionGrant } from "./decisions.js";
import { needsPrincipals, type PolicyRule } from "./policy/policy-rules.js";
import type { SessionReceipts } from "./policy/receipts.js";
import { VoteTally } from "./policy/vote-tally.js";

/**
 * The votes on the approvals a policy rule `require`s, on the replica holding their calls: who
 * may decide (the rule's `approvers`, through the session's roles: SessionRoles.mayDecide), how many
 * distinct approvers it takes (`count`, a VoteTally per approval), and every vote in the call's
 * receipt. An answer from a principal who may not decide counts for nothing, and is logged. A
 * rejection by one who may decides at once (a veto: consent is never inferred).
 */

/** What a `require` rule asks of one approval, kept with it (plain JSON: other replicas read it). */
export interface ApprovalNeeds {
  /** Who may decide it (the rule's `approvers`). */
  readonly deciders: Deciders;
  /** Distinct approvers needed. */
  readonly count: number;
  /** When the rule's deadline decides it (ms since the epoch), and how. */
  readonly deadlineAt?: number;
  readonly onDeadline: "deny" | "allow";
}

/**
 * How an approver without a principal (a gateway without tokens, the stdio commands, the Ask
 * socket) is named where it decides alone: under a rule that needs no principal (any decider, one approval).
 */
export const UNNAMED_APPROVER = "(no principal)";

export type VoteResult =
  /** Counted, and it decided: approved by these approvers, or rejected by the one who vetoed. */
  | { readonly kind: "decided"; readonly approved: boolean; readonly approvers: readonly string[] }
  /** Counted; more approvers are needed (`have` of `need`), or this one had voted already (`repeat`). */
  | { readonly kind: "vote"; readonly approver: string; readonly have: number; readonly need: number; readonly repeat?: true }
  /** Not counted: the principal may not decide this approval (logged). */
  | { readonly kind: "refused"; readonly deciders: string }
  /** Not counted: it was decided already. */
  | { readonly kind: "ignored" };

export interface ApprovalVotesOptions {
  sessionId: string;
  /** Whether a principal may decide an approval with these deciders (the session's roles); without it, anyone may. */
  mayDecide?(principal: SessionPrincipal, deciders: Deciders): Promise<boolean>;
  receipts: SessionReceipts;
  log?: Log;
}

export class ApprovalVotes {
  private readonly tallies = new Map<string, VoteTally>();

  constructor(private readonly options: ApprovalVotesOptions) {}

  /**
   * Casts one answer to approval `interactionId` (of call `callId`) as a vote; recorded in the
   * receipt when counted. `open` says whether the approval is still pending (an answer that comes
   * after it ended counts for nothing).
   */
  async cast(interactionId: string, callId: string, needs: ApprovalNeeds, principal: SessionPrincipal | undefined, approve: boolean, open: () => boolean = () => true): Promise<VoteResult> {
    const { sessionId, log } = this.options;
    if (!open()) return { kind: "ignored" };
    // A caller without a principal is never one of the deciders a rule names, nor one of N distinct approvers.
    const allowed = principal ? await this.allowed(principal, needs.deciders, interactionId) : !needsPrincipals(needs.deciders, needs.count);
    if (!open()) return { kind: "ignored" };
    if (!allowed) {
      const who = principal ? `principal '${principal.tokenId}'` : "a caller without a principal";
      log?.("info", `approval vote refused: ${who} may not decide ${interactionId} (${decidersText(needs.deciders)}${!principal && needs.count > 1 ? `, ${needs.count} distinct approvers` : ""})`, {
        sessionId,
        interactionId,
        ...(principal ? { principal: principal.tokenId } : {}),
      });
      return { kind: "refused", deciders: decidersText(needs.deciders) };
    }
    let tally = this.tallies.get(interactionId);
    if (!tally) this.tallies.set(interactionId, (tally = new VoteTally(needs.count)));
    const approver = principal?.tokenId ?? UNNAMED_APPROVER;
    const outcome = tally.cast({ approver, approve });
    if (outcome.kind === "closed") return { kind: "ignored" };
    if (outcome.kind !== "repeat") this.options.receipts.vote(callId, approver, approve);
    // A decided tally stays, closed, until the approval ends (forget): an answer after the decision counts for nothing.
    if (outcome.kind === "decided") return outcome;
    log?.("info", `approval vote counted: ${approver} approves ${interactionId} (${outcome.have} of ${outcome.need})`, { sessionId, interactionId, approver });
    return { kind: "vote", approver, have: outcome.have, need: outcome.need, ...(outcome.kind === "repeat" ? { repeat: true as const } : {}) };
  }

  /** The approval ended (decided, expired, cancelled): its votes are forgotten. */
  forget(interactionId: string): void {
    this.tallies.delete(interactionId);
  }

  private async allowed(principal: SessionPrincipal, deciders: Deciders, interactionId: string): Promise<boolean> {
    const { mayDecide } = this.options;
    if (!mayDecide) return true;
    try {
      return await mayDecide(principal, deciders);
    } catch (error) {
      // The roles cannot be read: the vote counts for nothing rather than for too much.
      this.options.log?.("warn", "approval vote not counted: the session's roles cannot be read", { sessionId: this.options.sessionId, interactionId, error: errorText(error) });
      return false;
    }
  }
}

/** Whom an approval was asked of, as its receipt's `asked` step says it. */
export function askedWhom(needs: ApprovalNeeds | undefined): string {
  if (!needs) return "the session's clients";
  return `the session's clients; decided by ${decidersText(needs.deciders)}${needs.count > 1 ? `, ${needs.count} distinct approvers` : ""}`;
}

/** Who may decide, as receipts and logs say it: "any controller", "principals lead; roles owner". */
export function decidersText(deciders: Deciders): string {
  if (deciders === "any") return "any controller";
  const parts = [
    ...(deciders.principals.length ? [`principals ${deciders.principals.join(", ")}`] : []),
    ...(deciders.roles.length ? [`roles ${deciders.roles.join(", ")}`] : []),
  ];
  return parts.join("; ") || "nobody";
}

/**
 * What was decided about an approval (plain JSON: it may be decided on another replica): by the
 * `approvers` counted, or by the rule's `deadline`. `voter`: one answer given on a replica that does
 * not hold the call, not counted yet (the holder counts it: a vote under a `require` rule).
 */
export type ApprovalDecision = ({ action: "approve"; scope: "once" | "session" } | { action: "reject"; feedback?: string }) & {
  approvers?: readonly string[];
  by?: "deadline";
  voter?: SessionPrincipal | null;
};

/** What one answer came to: it decided, it was a vote, it counted for nothing (refused, or too late). */
export type Heard = { readonly kind: "decided" } | Exclude<VoteResult, { kind: "decided" }>;

/**
 * What one client's answer to an approval came to, as its answerer is told: it decided the
 * approval; it was one vote that did not (`have` of `need` distinct approvers so far); or it was
 * handed to the replica holding the call as a vote (`sent`), which counts it there.
 */
export type ApprovalAnswered =
  | { readonly kind: "decided" }
  | { readonly kind: "vote"; readonly have: number; readonly need: number }
  | { readonly kind: "sent"; readonly need: number };

/** A vote's count as a client is told it: approvals so far (unknown when handed to the replica holding the call) of those needed. */
export interface VoteCount {
  approvals?: number;
  needed: number;
}

/** The count of an answer that was one vote and did not decide; undefined for the answer that decided. */
export function voteCountOf(answered: ApprovalAnswered): VoteCount | undefined {
  if (answered.kind === "vote") return { approvals: answered.have, needed: answered.need };
  if (answered.kind === "sent") return { needed: answered.need };
  return undefined;
}

/** An answer to a permission request in the bridge's words. */
export const decisionOf = (answer: InteractionRequestPermissionResult): ApprovalDecision => {
  const grant = decisionGrant(answer.decision);
  const feedback = answer.feedback ?? answer.reason;
  return grant === "denied" ? { action: "reject", ...(feedback ? { feedback } : {}) } : { action: "approve", scope: grant };
};

/** What a `require` rule asks of the approval it opens: its deciders, its count, its deadline. */
export function needsOf(rule: PolicyRule): ApprovalNeeds {
  return {
    deciders: rule.approvers,
    count: rule.count,
    onDeadline: rule.onDeadline,
    ...(rule.deadlineSeconds !== undefined ? { deadlineAt: Date.now() + rule.deadlineSeconds * 1000 } : {}),
  };
}
