import type { ApprovalInteraction, ApprovalScope, InteractionRequestPermissionResult } from "../../../generated/ask-v1.0.js";
import type { TauUpstream } from "../../tau/upstream.js";
import { draft, type EventDraft } from "../event-draft.js";
import type { GatewayTool, ToolContext } from "./gateway-tool.js";
import { SUBMIT_PLAN_TOOL } from "./tool-names.js";
import { InteractionError } from "./interaction-error.js";
import type { InteractionKind, Pending } from "./pending-interactions.js";
import { errorReply, type ToolCall } from "./tool-call.js";
import type { ToolGating } from "./tool-gating.js";
import type { CommandToolConfig } from "./tools-config.js";
import { errorText, isObject } from "../../shared/unknown-values.js";
import { matchingRule, type ApprovalPolicy, type PolicyRule } from "./policy/policy-rules.js";
import { policyReason, policyRefusal } from "./policy/policy-words.js";
import { callDigest } from "./policy/call-digest.js";
import type { Receipt, SessionReceipts } from "./policy/receipts.js";
import type { SessionPrincipal } from "../session-principal.js";
import { ApprovalVotes, askedWhom, decisionOf, needsOf, type ApprovalDecision, type ApprovalNeeds, type Heard } from "./approval-votes.js";
import { execCommand } from "./command-runs.js";
import { permissionRequest } from "./permission-request.js";
import { recordLeftBehind } from "./policy/left-behind-receipt.js";

/**
 * The operator's command tools (--tools-config; DESIGN §4.4). A call becomes an approval
 * (`approval.required`, and an interaction/requestPermission reverse request) unless the session's
 * mode runs them without asking or the tool was granted for the session; mode `plan` refuses them
 * until a plan is approved; the policy's rule, when one matches, decides first (a `require` rule's
 * approvals are voted on: approval-votes.ts). An approved call runs its command (command-runs.ts),
 * and only the call that was decided: its digest is checked before it runs. The command's output is
 * the tool result; a rejection fails the tool with the reason.
 */

/** The error for an approval that is not pending (never was, or already resolved). */
export const notPendingApproval = (interactionId: string) => `no pending approval ${interactionId}`;

/** What an approval decided by its rule's deadline says (receipt, event and the agent's result). */
const DECIDED_BY_DEADLINE = "decided by deadline";

/** The result of an approved call whose replica stopped before running it. */
const NOT_RUN_AFTER_TAKEOVER = "approved, but not run: the gateway replica that held the call stopped before running the command; call the tool again";

/** Scopes a grant may have here; `project` needs per-workspace grants the gateway does not keep. */
const ALLOWED_SCOPES: ApprovalScope[] = ["once", "session"];
/** What an approval a policy's `require` rule asks for may hold for: this call (its digest) alone. */
const BOUND_SCOPES: ApprovalScope[] = ["once"];

interface ApprovalRequest {
  readonly tool: CommandToolConfig;
  readonly payload: ApprovalInteraction["payload"];
  /** The digest of the call asked about: what is decided is bound to it. */
  readonly digest: string;
  /** What the `require` rule that matched asks (absent: the first answer of anyone who may answer decides). */
  readonly needs?: ApprovalNeeds;
  /** The rule that matched, for the receipt another replica may have to write (left-behind-receipt.ts). */
  readonly rule?: Receipt["rule"];
}

/**
 * Approvals as the pending table knows them; `expired` is told of each one the deadline denies,
 * `leftBehind` of each one another replica held and left pending when it went away.
 */
const approvalKind = (expired: (p: Pending<ApprovalRequest>) => void, leftBehind: InteractionKind<ApprovalRequest>["leftBehind"]): InteractionKind<ApprovalRequest> => ({
  leftBehind,
  idKind: "approval",
  created: (p) => draft("approval.required", { id: p.id, ...p.data.payload }),
  ended: (p, status, reason) => draft("approval.updated", { id: p.id, status, reason }),
  expiredReply: (p, reason) => {
    expired(p);
    return errorReply(`not approved: ${reason}, so the call was denied`);
  },
  record: (p) => ({ id: p.id, kind: "approval", status: "pending", payload: p.data.payload }),
});

/** approval.updated for a grant; scope is omitted when once. */
const approved = (id: string, scope: "once" | "session"): EventDraft =>
  draft("approval.updated", { id, status: "approved", ...(scope === "session" ? { scope } : {}) });

export interface CommandToolsOptions {
  /** The session's approval mode now and its session-wide grants (both may change while it runs). */
  gating: Pick<ToolGating, "mode" | "granted" | "grant">;
  /** Whether a plan has been approved in the session (mode `plan` asks only then). */
  planApproved(): boolean;
  /** The bridge connection, which runs the commands. */
  upstream: Pick<TauUpstream, "request">;
  /** The operator's approval policy: its first matching rule decides before the mode does. */
  policy: ApprovalPolicy;
  /** What the policy's session conditions look at. */
  facts: { tenant: string; cwd?: string };
  /** The session's receipts: every call's lifecycle. */
  receipts: SessionReceipts;
  /** Whether a principal may decide an approval a `require` rule names the deciders of (the session's roles). */
  mayDecide?: ApprovalVotes["options"]["mayDecide"];
}

export class CommandTools {
  private readonly approvals: InteractionKind<ApprovalRequest>;
  private readonly votes: ApprovalVotes;

  constructor(
    private readonly context: ToolContext,
    private readonly options: CommandToolsOptions,
  ) {
    this.approvals = approvalKind(
      (p) => options.receipts.decided(p.call.message.callId, "deadline", "rejected"),
      ({ id, callId, data }, reason) =>
        recordLeftBehind(options.receipts, { sessionId: context.sessionId, callId, id, tool: data.tool.name, digest: data.digest, policyVersion: options.policy.version, ...(data.rule ? { rule: data.rule } : {}), whom: askedWhom(data.needs) }, reason),
    );
    const { sessionId, log } = context;
    this.votes = new ApprovalVotes({ sessionId, receipts: options.receipts, log, ...(options.mayDecide ? { mayDecide: options.mayDecide } : {}) });
    context.pending.register(this.approvals, (approval, decision) => this.carryOut(approval, decision as ApprovalDecision));
  }

  /** Who may decide the pending approval `interactionId` held here ("any" for one no `require` rule names deciders of); undefined when none is pending here. */
  decidersOf(interactionId: string) {
    const approval = this.context.pending.find(this.approvals, interactionId);
    return approval && (approval.data.needs?.deciders ?? "any");
  }

  /**
   * One answer to the pending approval `interactionId` held here, from `principal`: under a
   * `require` rule it is a vote (it decides once the count is reached, or at once as a rejection; a
   * principal who may not decide counts for nothing); otherwise it decides. Resolves with what it
   * came to; undefined when no such approval is pending here.
   */
  hearHeld(interactionId: string, decision: ApprovalDecision, principal: SessionPrincipal | undefined): Promise<Heard> | undefined {
    const approval = this.context.pending.find(this.approvals, interactionId);
    return approval && this.hear(approval, decision, principal);
  }

  /** The GatewayTool serving one configured command tool. */
  serving(tool: CommandToolConfig): GatewayTool {
    return { parameters: tool.parameters, start: (call, args) => this.start(call, tool, args) };
  }

  /** interaction/approve. */
  approve(interactionId: string, scope: ApprovalScope = "once"): void {
    const approval = this.pendingApproval(interactionId);
    void this.hear(approval, { action: "approve", scope: checkedScope(scope) }, undefined);
  }

  /** interaction/reject. */
  reject(interactionId: string, feedback?: string): void {
    void this.hear(this.pendingApproval(interactionId), { action: "reject", ...(feedback ? { feedback } : {}) }, undefined);
  }

  /** interaction/approve-all: how many were pending. */
  approveAll(scope: ApprovalScope = "once"): number {
    const checked = checkedScope(scope);
    const approvals = this.context.pending.all(this.approvals);
    for (const approval of approvals) void this.hear(approval, { action: "approve", scope: checked }, undefined);
    return approvals.length;
  }

  /** interaction/reject-all: how many were pending. */
  rejectAll(feedback?: string): number {
    const approvals = this.context.pending.all(this.approvals);
    for (const approval of approvals) void this.hear(approval, { action: "reject", ...(feedback ? { feedback } : {}) }, undefined);
    return approvals.length;
  }

  private start(call: ToolCall, tool: CommandToolConfig, args: unknown): void {
    const { planApproved, gating } = this.options;
    const { mode } = gating;
    const { pending, answer } = this.context;
    const rule = this.ruleFor(tool, args, mode);
    const { callId } = call.message;
    const { receipts } = this.options;
    const digest = this.propose(call, tool, args, rule);
    if (rule?.action === "allow") {
      receipts.decided(callId, "rule", "approved");
      // Allowed by the operator's policy: no question, but the decision shows in the event stream.
      pending.decided("approval", (id) => draft("approval.updated", { id, status: "approved", reason: policyReason(rule) }));
      return this.run(call, tool);
    }
    if (rule?.action === "deny") {
      const refusal = policyRefusal(rule);
      receipts.decided(callId, "rule", "rejected", refusal);
      pending.decided("approval", (id) => draft("approval.updated", { id, status: "rejected", feedback: refusal }));
      return answer(call, errorReply(refusal));
    }
    // A rule that requires approval asks whatever the mode, and a session-wide grant does not skip it.
    const required = rule?.action === "require";
    if (!required && (mode === "auto" || mode === "never")) {
      receipts.decided(callId, "mode", "approved", mode);
      return this.run(call, tool);
    }
    if (mode === "plan" && !planApproved()) {
      receipts.decided(callId, "mode", "rejected", "plan");
      return answer(
        call,
        errorReply(`${tool.name} is not available until a plan is approved: propose one with ${SUBMIT_PLAN_TOOL} and wait for the user's decision`),
      );
    }
    if (!required && gating.granted(tool.name)) {
      // Granted for the session: no question, but the decision still shows in the event stream.
      receipts.decided(callId, "grant", "approved");
      pending.decided("approval", (id) => approved(id, "session"));
      return this.run(call, tool);
    }
    const needs = required ? needsOf(rule) : undefined;
    const approval = pending.open(this.approvals, call, {
      tool,
      digest,
      ...(needs ? { needs } : {}),
      ...(rule ? { rule: { name: rule.name, index: rule.index } } : {}),
      payload: {
        toolName: tool.name,
        ...(isObject(args) ? { args } : {}),
        message: `Tool '${tool.name}' runs ${tool.command} in the session's environment with these arguments.`,
        allowedScopes: needs ? BOUND_SCOPES : ALLOWED_SCOPES,
      },
    });
    receipts.asked(callId, approval.id, askedWhom(needs));
    if (!pending.isPending(approval)) return; // settled by a listener of the event
    // However it ends (decided, expired, cancelled), its votes are forgotten.
    approval.asking.addEventListener("abort", () => this.votes.forget(approval.id), { once: true });
    if (needs?.deadlineAt !== undefined) this.decideAtDeadline(approval, needs.deadlineAt);
    this.askClients(approval, args);
  }

  /** The rule's deadline: unless decided before it, the approval is decided by the rule's onDeadline (deny unless it says allow). */
  private decideAtDeadline(approval: Pending<ApprovalRequest>, at: number): void {
    const timer = setTimeout(() => {
      if (!this.context.pending.isPending(approval)) return;
      const allow = approval.data.needs?.onDeadline === "allow";
      void this.context.pending.decide(approval, (allow ? { action: "approve", scope: "once", by: "deadline" } : { action: "reject", by: "deadline" }) satisfies ApprovalDecision);
    }, Math.max(0, at - Date.now()));
    timer.unref?.();
    approval.asking.addEventListener("abort", () => clearTimeout(timer), { once: true });
  }

  /**
   * One answer to `approval` from `principal` (none: a gateway without tokens, or a method called
   * without one): a vote under a `require` rule, counted (votes.ts); the decision otherwise, as
   * always. True when it settled the approval.
   */
  private async hear(approval: Pending<ApprovalRequest>, decision: ApprovalDecision, principal: SessionPrincipal | undefined): Promise<Heard> {
    const { needs } = approval.data;
    if (!needs) return (await this.context.pending.decide(approval, decision)) ? { kind: "decided" } : { kind: "ignored" };
    const result = await this.votes.cast(approval.id, approval.call.message.callId, needs, principal, decision.action === "approve", () => this.context.pending.isPending(approval));
    // Every client of the session is told of a vote counted that did not decide: the approval is still pending.
    if (result.kind === "vote" && !result.repeat) this.context.pending.tell(approval, draft("approval.voted", { id: approval.id, approver: result.approver, approvals: result.have, needed: result.need }));
    if (result.kind !== "decided") return result;
    // A `require` rule's decision is bound to this call (its digest): it holds for this call only, whatever scope was asked for.
    const decided: ApprovalDecision = result.approved
      ? { action: "approve", scope: "once", approvers: result.approvers }
      : { action: "reject", ...(decision.action === "reject" && decision.feedback ? { feedback: decision.feedback } : {}), approvers: result.approvers };
    return (await this.context.pending.decide(approval, decided)) ? { kind: "decided" } : { kind: "ignored" };
  }

  /** Starts the call's receipt, with its digest and the rule that matched. */
  private propose(call: ToolCall, tool: CommandToolConfig, args: unknown, rule: PolicyRule | undefined): string {
    const digest = this.digestOf(tool, args);
    this.options.receipts.propose({
      sessionId: this.context.sessionId,
      callId: call.message.callId,
      tool: tool.name,
      digest,
      policyVersion: this.options.policy.version,
      ...(rule ? { rule: { name: rule.name, index: rule.index } } : {}),
    });
    return digest;
  }

  private digestOf(tool: CommandToolConfig, args: unknown): string {
    return callDigest({ tool: tool.name, arguments: args, sessionId: this.context.sessionId, policyVersion: this.options.policy.version });
  }

  /** The policy's first rule matching this call, if any. */
  private ruleFor(tool: CommandToolConfig, args: unknown, approvalMode: ToolGating["mode"]): PolicyRule | undefined {
    const { policy, facts } = this.options;
    if (policy.rules.length === 0) return undefined;
    return matchingRule(policy, {
      toolName: tool.name,
      commandLine: [tool.command, ...(tool.args ?? [])].join(" "),
      arguments: args,
      session: { ...facts, approvalMode },
    });
  }

  /** interaction/requestPermission to the clients that opted in; each answer is heard as it comes (a vote, or the decision). */
  private askClients(approval: Pending<ApprovalRequest>, args: unknown): void {
    const { sessionId, pending, reverse, log } = this.context;
    const { name } = approval.data.tool;
    const params = permissionRequest(sessionId, approval.id, { toolName: name, input: args, allowedScopes: approval.data.payload.allowedScopes });
    // Answers the requesters counted; one they did not (a requester that ignores the vote) is heard when it comes back.
    const heard = new WeakSet<object>();
    const vote = (answer: InteractionRequestPermissionResult, principal: SessionPrincipal | undefined) => {
      heard.add(answer);
      return this.hear(approval, decisionOf(answer), principal).then(
        (heard) => heard.kind === "decided",
        () => false,
      );
    };
    pending.whenAnnounced(approval, () => reverse.requestPermission(sessionId, params, approval.asking, vote)).then(
      (answer) => {
        if (!pending.isPending(approval)) return;
        if (answer === undefined) {
          log?.("debug", "no client's answer settled the permission request; waiting for interaction/*, more votes or the deadline", { sessionId, interactionId: approval.id });
          return;
        }
        if (!heard.has(answer)) void this.hear(approval, decisionOf(answer), undefined);
      },
      (error: unknown) => {
        // An error is not consent: deny (fail closed).
        if (pending.isPending(approval)) void pending.decide(approval, { action: "reject", feedback: `permission request failed: ${errorText(error)}` } satisfies ApprovalDecision);
      },
    );
  }

  /**
   * The decision that won: a grant runs the command, anything else refuses (consent is never
   * inferred). One answer given on another replica under a `require` rule is a vote (it left the
   * approval pending in the store, so every client can still answer it), counted here as one given
   * here is: the one that reaches the count (or vetoes) decides, through the store as any decision.
   */
  private carryOut(approval: Pending<ApprovalRequest>, decision: ApprovalDecision): void | Promise<void> {
    const { needs } = approval.data;
    if (needs && decision?.voter !== undefined && !decision.by) {
      const { voter, ...answer } = decision;
      return this.hear(approval, answer, voter ?? undefined).then(() => undefined);
    }
    // Past the rule's deadline a decision no longer counts: the deadline's outcome stands.
    const late = needs?.deadlineAt !== undefined && !decision?.by && Date.now() > needs.deadlineAt;
    const byDeadline = decision?.by === "deadline" || late;
    const approve = byDeadline ? needs?.onDeadline === "allow" : decision?.action === "approve" && (decision.scope === "once" || decision.scope === "session");
    const by = byDeadline ? "deadline" : "client";
    const approvers = !byDeadline && Array.isArray(decision?.approvers) ? decision.approvers : undefined;
    const { callId } = approval.call.message;
    if (approve) {
      const { tool } = approval.data;
      const scope = !byDeadline && decision.action === "approve" ? decision.scope : "once";
      this.options.receipts.decided(callId, by, "approved", byDeadline ? DECIDED_BY_DEADLINE : scope, approvers);
      if (scope === "session") this.options.gating.grant(tool.name);
      const event = byDeadline ? draft("approval.updated", { id: approval.id, status: "approved", reason: DECIDED_BY_DEADLINE }) : approved(approval.id, scope);
      if (!this.context.pending.resolve(approval, { event })) return;
      // A call taken over from a replica that stopped was most likely cancelled by Tau with it: a
      // command must not run for a call nobody may answer any more.
      if (approval.call.adopted) this.context.answer(approval.call, errorReply(NOT_RUN_AFTER_TAKEOVER));
      else this.runBound(approval);
      return;
    }
    const feedback = !byDeadline && decision?.action === "reject" ? decision.feedback : undefined;
    const said = byDeadline ? DECIDED_BY_DEADLINE : typeof feedback === "string" && feedback ? feedback : undefined;
    this.options.receipts.decided(callId, by, "rejected", said, approvers);
    this.context.pending.resolve(approval, {
      event: draft("approval.updated", { id: approval.id, status: "rejected", ...(said ? { feedback: said } : {}) }),
      reply: errorReply(byDeadline ? `not approved: ${DECIDED_BY_DEADLINE}` : said ? `rejected by the user: ${said}` : "rejected by the user"),
    });
  }

  /**
   * Runs an approved call if it is still the call that was decided: the digest of the arguments
   * about to run is the one asked about (a decision never carries over to a changed call).
   */
  private runBound(approval: Pending<ApprovalRequest>): void {
    const { call, data } = approval;
    const digest = this.digestOf(data.tool, call.message.arguments);
    if (digest !== data.digest) {
      this.context.log?.("warn", "an approved call changed before it ran; not run", { sessionId: this.context.sessionId, interactionId: approval.id, asked: data.digest, running: digest });
      return this.context.answer(call, errorReply(`approved, but not run: the call changed since it was approved (${data.digest} was decided, ${digest} would run)`));
    }
    this.run(call, data.tool, digest);
  }

  private pendingApproval(interactionId: string): Pending<ApprovalRequest> {
    const approval = this.context.pending.find(this.approvals, interactionId);
    if (!approval) throw new InteractionError("interaction_not_found", notPendingApproval(interactionId));
    return approval;
  }

  /** Runs the approved command; its result, or its failure, answers the call (unless Tau cancelled it). */
  private run(call: ToolCall, tool: CommandToolConfig, digest = this.digestOf(tool, call.message.arguments)): void {
    call.running = true;
    this.options.receipts.executed(call.message.callId, digest);
    execCommand(this.options.upstream, this.context, call, tool)
      .catch((error: unknown) => errorReply(`could not run ${tool.command}: ${errorText(error)}`))
      .then((reply) => {
        call.running = false;
        this.context.answer(call, reply);
      });
  }
}

/** once and session are honoured; project (per-workspace grants) is refused rather than downgraded. */
export function checkedScope(scope: ApprovalScope): "once" | "session" {
  if (scope === "once" || scope === "session") return scope;
  throw new InteractionError(
    "invalid_params",
    `scope ${JSON.stringify(scope)} is not supported: the gateway grants tools once or for the session (allowed: ${ALLOWED_SCOPES.join(", ")})`,
  );
}
