import type {
  InteractionRequestPermissionParams,
  InteractionRequestPermissionResult,
  InteractionRequestUserInputParams,
} from "../../generated/ask-v1.0.js";
import type { CommandExecutionApprovalDecision } from "../../generated/codex-v2.js";
import { offeredTo } from "../bridge/decision-offers.js";
import { counted, offersSessionScope, type PermissionVote, type PlanApprovalParams, type PlanApprovalResult, type ReverseRequester, type UserInputOutcome } from "../bridge/interactions/index.js";
import type { SessionRoles } from "../bridge/session-roles.js";
import { COMMAND_APPROVAL_DECISIONS } from "../registry/codex/index.js";
import { ProtocolValidators } from "../validation/validator.js";
import type { CodexPeer } from "./peer.js";
import { answerText, questionOutcome } from "./question-answers.js";
import type { CodexThread } from "./thread.js";

/**
 * How the bridge's interactions reach Codex clients: an approval of one of the gateway's command
 * tools becomes item/commandExecution/requestApproval for the command's item, a question of
 * ask_user becomes item/tool/requestUserInput (experimental: only for connections that opted in),
 * and so does a plan for approval (its answer Approve, Reject, or other words: a rejection with them).
 * A question's answer that leaves it out declines it (question-answers.ts).
 * Decisions map onto the bridge's: accept and acceptForSession approve (once, for the session),
 * decline refuses, cancel refuses and interrupts the turn. An error answer, or one that does not
 * fit the schema, refuses — consent is never inferred. `reaches` narrows the connections asked (a
 * client that loaded the thread while an approval was pending is asked alone: joiner-asking.ts).
 * A connection whose principal may not decide (an observer) is not asked at all (decision-offers.ts):
 * it sees the command item and the thread waiting on approval, and the outcome, but no dialog whose
 * choices would count for nothing. `availableDecisions` cannot say "none": an empty list leaves
 * codex-acp without the allow and reject choices it requires.
 */
export class CodexServerRequests implements ReverseRequester {
  constructor(
    private readonly threadOf: (sessionId: string) => CodexThread | undefined,
    private readonly roles: Pick<SessionRoles, "mayDecideOn">,
    private readonly reaches: (peer: CodexPeer) => boolean = () => true,
  ) {}

  /** The connections to ask about interaction `interactionId`: those reached whose principal may decide it. */
  private deciding(sessionId: string, interactionId: string, also: (peer: CodexPeer) => boolean = () => true) {
    return (peer: CodexPeer) => this.reaches(peer) && also(peer) && offeredTo(this.roles, sessionId, peer.principal, interactionId);
  }

  async requestPermission(sessionId: string, params: InteractionRequestPermissionParams, signal: AbortSignal, vote?: PermissionVote): Promise<InteractionRequestPermissionResult | undefined> {
    const thread = this.threadOf(sessionId);
    const item = thread?.translatorState.approvalItem(params.requestId);
    if (!thread || item?.type !== "commandExecution") return undefined;
    const startedAtMs = Date.now();
    const refusal = { decision: "decline" } as const;
    const answer = await thread.ask(
      "item/commandExecution/requestApproval",
      (turnId) => ({
        threadId: thread.threadId,
        turnId,
        itemId: item.id,
        startedAtMs,
        command: item.command,
        cwd: item.cwd,
        commandActions: item.commandActions,
        reason: params.reason ?? null,
        // acceptForSession is left out when the decision holds for this call alone (a policy's `require` rule).
        availableDecisions: offersSessionScope(params) ? [...COMMAND_APPROVAL_DECISIONS] : COMMAND_APPROVAL_DECISIONS.filter((d) => d !== "acceptForSession"),
      }),
      signal,
      this.deciding(sessionId, params.interactionId ?? params.requestId),
      () => refusal,
      // Each connection's answer is counted as it comes: one that was a vote leaves the others asked.
      // The one that settles it comes back as the decision worked out here (checked once).
      async (reply, peer) => {
        if (reply === undefined) return undefined;
        const decided = permissionAnswer(reply);
        // A `cancel` interrupts the turn before its decline can reach Tau (counting it may settle the
        // approval at once), so nothing more of the turn runs, as in Codex.
        if (decided.decision === "cancel") thread.interrupt();
        return counted(decided, peer.principal, vote);
      },
    );
    return answer as InteractionRequestPermissionResult | undefined;
  }

  async requestUserInput(sessionId: string, params: InteractionRequestUserInputParams, signal: AbortSignal): Promise<UserInputOutcome | undefined> {
    const thread = this.threadOf(sessionId);
    if (!thread) return undefined;
    const answer = await thread.ask(
      "item/tool/requestUserInput",
      (turnId) => ({
        threadId: thread.threadId,
        turnId,
        itemId: params.requestId,
        isBlocking: true,
        questions: [
          {
            id: QUESTION_ID,
            header: "Question",
            question: params.prompt,
            isOther: true,
            isSecret: false,
            options: params.options?.length ? params.options.map((label) => ({ label, description: "" })) : null,
          },
        ],
      }),
      signal,
      this.deciding(sessionId, params.interactionId ?? params.requestId, (peer) => peer.client.experimentalApi),
    );
    return questionOutcome(answer, QUESTION_ID);
  }

  async requestPlanApproval(sessionId: string, { interactionId, plan }: PlanApprovalParams, signal: AbortSignal): Promise<PlanApprovalResult | undefined> {
    const thread = this.threadOf(sessionId);
    if (!thread) return undefined;
    const answer = await thread.ask(
      "item/tool/requestUserInput",
      (turnId) => ({
        threadId: thread.threadId,
        turnId,
        itemId: interactionId,
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
              { label: REJECT_PLAN, description: "Do not carry it out; the answer goes to the agent" },
            ],
          },
        ],
      }),
      signal,
      this.deciding(sessionId, interactionId, (peer) => peer.client.experimentalApi),
    );
    const response = answerText(answer, PLAN_QUESTION_ID);
    if (response === undefined) return undefined;
    if (response === APPROVE_PLAN) return { action: "approve" };
    return { action: "reject", ...(response === REJECT_PLAN ? {} : { feedback: response }) };
  }
}

const QUESTION_ID = "answer";
const PLAN_QUESTION_ID = "plan";
const APPROVE_PLAN = "Approve";
const REJECT_PLAN = "Reject";

/** A Codex decision in the bridge's words (see decisions.ts): amendments are approvals of this one command. */
function bridgeDecision(decision: CommandExecutionApprovalDecision): InteractionRequestPermissionResult["decision"] {
  if (typeof decision === "string") return decision;
  return "acceptWithExecpolicyAmendment" in decision ? "accept" : "decline";
}

/** A Codex answer to a command approval in the bridge's words; one that does not fit the schema refuses. */
function permissionAnswer(answer: unknown): InteractionRequestPermissionResult {
  const codex = ProtocolValidators.shared().get("codex");
  if (!codex.result("item/commandExecution/requestApproval", answer, "", "server").ok) return { decision: bridgeDecision("decline") };
  return { decision: bridgeDecision((answer as { decision: CommandExecutionApprovalDecision }).decision) };
}
