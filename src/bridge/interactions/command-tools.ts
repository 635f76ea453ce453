import { randomUUID } from "node:crypto";
import type { ApprovalInteraction, ApprovalScope } from "../../../generated/ask-v1.0.js";
import type { SessionExecParams, SessionExecResult } from "../../../generated/tau-v18.js";
import type { TauUpstream } from "../../tau/upstream.js";
import { draft, type EventDraft } from "../event-draft.js";
import { decisionGrant } from "./decisions.js";
import type { GatewayTool, ToolContext } from "./gateway-tool.js";
import { SUBMIT_PLAN_TOOL } from "./tool-names.js";
import { InteractionError } from "./interaction-error.js";
import type { InteractionKind, Pending } from "./pending-interactions.js";
import { errorReply, textReply, type ToolCall, type ToolReply } from "./tool-call.js";
import type { ToolGating } from "./tool-gating.js";
import { DEFAULT_COMMAND_TIMEOUT_MS, type CommandToolConfig } from "./tools-config.js";
import { errorText, isObject } from "../../shared/unknown-values.js";
import { matchingRule, type ApprovalPolicy, type PolicyRule } from "./policy/policy-rules.js";
import { policyReason, policyRefusal } from "./policy/policy-words.js";
import { callDigest } from "./policy/call-digest.js";
import type { SessionReceipts } from "./policy/receipts.js";

/**
 * The operator's command tools (--tools-config; DESIGN §4.4). A call becomes an approval
 * (`approval.required`, and an interaction/requestPermission reverse request) unless the session's
 * mode runs them without asking or the tool was granted for the session; mode `plan` refuses them
 * until a plan is approved. interaction/approve runs the command in the session's execution
 * environment with Tau's `session.exec`: the configured command and args travel as argv
 * (`exec "$0" "$@"` makes the first one the program) and the model's arguments as JSON on stdin, so
 * nothing the model writes is ever interpreted by a shell. The command's output is the tool result;
 * a rejection fails the tool with the reason.
 */

/** Runs argv[0] with the remaining values as its arguments, without shell interpolation (spec §4.3). */
export const EXEC_ARGV = 'exec "$0" "$@"';

/** The error for an approval that is not pending (never was, or already resolved). */
export const notPendingApproval = (interactionId: string) => `no pending approval ${interactionId}`;

/** The result of an approved call whose replica stopped before running it. */
const NOT_RUN_AFTER_TAKEOVER = "approved, but not run: the gateway replica that held the call stopped before running the command; call the tool again";

/** Scopes a grant may have here; `project` needs per-workspace grants the gateway does not keep. */
const ALLOWED_SCOPES: ApprovalScope[] = ["once", "session"];

/** The limit a command tool's run gets. */
export const commandTimeoutMs = (tool: CommandToolConfig): number => tool.timeoutMs ?? DEFAULT_COMMAND_TIMEOUT_MS;

interface ApprovalRequest {
  readonly tool: CommandToolConfig;
  readonly payload: ApprovalInteraction["payload"];
}

/** Approvals as the pending table knows them; `expired` is told of each one the deadline denies. */
const approvalKind = (expired: (p: Pending<ApprovalRequest>) => void): InteractionKind<ApprovalRequest> => ({
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
}

/** What was decided about an approval (plain JSON: it may be decided on another replica). */
type ApprovalDecision = { action: "approve"; scope: "once" | "session" } | { action: "reject"; feedback?: string };

export class CommandTools {
  private readonly approvals: InteractionKind<ApprovalRequest>;

  constructor(
    private readonly context: ToolContext,
    private readonly options: CommandToolsOptions,
  ) {
    this.approvals = approvalKind((p) => options.receipts.decided(p.call.message.callId, "deadline", "rejected"));
    context.pending.register(this.approvals, (approval, decision) => this.carryOut(approval, decision));
  }

  /** The GatewayTool serving one configured command tool. */
  serving(tool: CommandToolConfig): GatewayTool {
    return { parameters: tool.parameters, start: (call, args) => this.start(call, tool, args) };
  }

  /** interaction/approve. */
  approve(interactionId: string, scope: ApprovalScope = "once"): void {
    const approval = this.pendingApproval(interactionId);
    this.grant(approval, checkedScope(scope));
  }

  /** interaction/reject. */
  reject(interactionId: string, feedback?: string): void {
    this.deny(this.pendingApproval(interactionId), feedback);
  }

  /** interaction/approve-all: how many were pending. */
  approveAll(scope: ApprovalScope = "once"): number {
    const checked = checkedScope(scope);
    const approvals = this.context.pending.all(this.approvals);
    for (const approval of approvals) this.grant(approval, checked);
    return approvals.length;
  }

  /** interaction/reject-all: how many were pending. */
  rejectAll(feedback?: string): number {
    const approvals = this.context.pending.all(this.approvals);
    for (const approval of approvals) this.deny(approval, feedback);
    return approvals.length;
  }

  private start(call: ToolCall, tool: CommandToolConfig, args: unknown): void {
    const { planApproved, gating } = this.options;
    const { mode } = gating;
    const { pending, answer } = this.context;
    const rule = this.ruleFor(tool, args, mode);
    const { callId } = call.message;
    const { receipts } = this.options;
    this.propose(call, tool, args, rule);
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
    const approval = pending.open(this.approvals, call, {
      tool,
      payload: {
        toolName: tool.name,
        ...(isObject(args) ? { args } : {}),
        message: `Tool '${tool.name}' runs ${tool.command} in the session's environment with these arguments.`,
        allowedScopes: ALLOWED_SCOPES,
      },
    });
    receipts.asked(callId, approval.id, "the session's clients");
    if (!pending.isPending(approval)) return; // settled by a listener of the event
    this.askClients(approval, args);
  }

  /** Starts the call's receipt, with its digest and the rule that matched. */
  private propose(call: ToolCall, tool: CommandToolConfig, args: unknown, rule: PolicyRule | undefined): void {
    const { sessionId } = this.context;
    const policyVersion = this.options.policy.version;
    this.options.receipts.propose({
      sessionId,
      callId: call.message.callId,
      tool: tool.name,
      digest: callDigest({ tool: tool.name, arguments: args, sessionId, policyVersion }),
      policyVersion,
      ...(rule ? { rule: { name: rule.name, index: rule.index } } : {}),
    });
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

  /** interaction/requestPermission to the clients that opted in; the first answer decides. */
  private askClients(approval: Pending<ApprovalRequest>, args: unknown): void {
    const { sessionId, pending, reverse, log } = this.context;
    const { name } = approval.data.tool;
    const params = {
      requestId: approval.id,
      toolName: name,
      ...(args === undefined ? {} : { input: args }),
      riskLevel: "medium" as const,
      reason: `Tool '${name}' requires approval`,
      sessionId,
      interactionId: approval.id,
    };
    pending.whenAnnounced(approval, () => reverse.requestPermission(sessionId, params, approval.asking)).then(
      (answer) => {
        if (!pending.isPending(approval)) return;
        if (answer === undefined) {
          log?.("debug", "no client can answer the permission request; waiting for interaction/* or the deadline", { sessionId, interactionId: approval.id });
          return;
        }
        const grant = decisionGrant(answer.decision);
        if (grant === "denied") this.deny(approval, answer.feedback ?? answer.reason);
        else this.grant(approval, grant);
      },
      (error: unknown) => {
        // An error is not consent: deny (fail closed).
        if (pending.isPending(approval)) this.deny(approval, `permission request failed: ${errorText(error)}`);
      },
    );
  }

  private grant(approval: Pending<ApprovalRequest>, scope: "once" | "session"): void {
    void this.context.pending.decide(approval, { action: "approve", scope } satisfies ApprovalDecision);
  }

  private deny(approval: Pending<ApprovalRequest>, feedback?: string): void {
    void this.context.pending.decide(approval, { action: "reject", ...(feedback ? { feedback } : {}) } satisfies ApprovalDecision);
  }

  /** The decision that won: a grant runs the command, anything else refuses (consent is never inferred). */
  private carryOut(approval: Pending<ApprovalRequest>, decision: unknown): void {
    const { action, scope, feedback } = (decision ?? {}) as Partial<Record<"action" | "scope" | "feedback", unknown>>;
    const { callId } = approval.call.message;
    if (action === "approve" && (scope === "once" || scope === "session")) {
      const { tool } = approval.data;
      this.options.receipts.decided(callId, "client", "approved", scope);
      if (scope === "session") this.options.gating.grant(tool.name);
      if (!this.context.pending.resolve(approval, { event: approved(approval.id, scope) })) return;
      // A call taken over from a replica that stopped was most likely cancelled by Tau with it: a
      // command must not run for a call nobody may answer any more.
      if (approval.call.adopted) this.context.answer(approval.call, errorReply(NOT_RUN_AFTER_TAKEOVER));
      else this.run(approval.call, tool);
      return;
    }
    const said = typeof feedback === "string" && feedback ? feedback : undefined;
    this.options.receipts.decided(callId, "client", "rejected", said);
    this.context.pending.resolve(approval, {
      event: draft("approval.updated", { id: approval.id, status: "rejected", ...(said ? { feedback: said } : {}) }),
      reply: errorReply(said ? `rejected by the user: ${said}` : "rejected by the user"),
    });
  }

  private pendingApproval(interactionId: string): Pending<ApprovalRequest> {
    const approval = this.context.pending.find(this.approvals, interactionId);
    if (!approval) throw new InteractionError("interaction_not_found", notPendingApproval(interactionId));
    return approval;
  }

  /** Runs the approved command; its result, or its failure, answers the call (unless Tau cancelled it). */
  private run(call: ToolCall, tool: CommandToolConfig): void {
    call.running = true;
    this.options.receipts.executed(call.message.callId);
    this.exec(call, tool)
      .catch((error: unknown) => errorReply(`could not run ${tool.command}: ${errorText(error)}`))
      .then((reply) => {
        call.running = false;
        this.context.answer(call, reply);
      });
  }

  /** `session.exec` of the command; when Tau cancels the call, the run is cancelled upstream too (`session.cancelExec`). */
  private async exec(call: ToolCall, tool: CommandToolConfig): Promise<ToolReply> {
    const { sessionId, log } = this.context;
    const { upstream } = this.options;
    const timeoutMs = commandTimeoutMs(tool);
    const params: SessionExecParams = {
      sessionId,
      execId: `gw-${randomUUID()}`,
      command: EXEC_ARGV,
      args: [tool.command, ...(tool.args ?? [])],
      stdinBase64: Buffer.from(JSON.stringify(call.message.arguments), "utf8").toString("base64"),
      timeoutMs,
    };
    const cancel = () => {
      upstream
        .request("session.cancelExec", { sessionId, execId: params.execId })
        .catch((error: unknown) => log?.("debug", "session.cancelExec failed", { sessionId, execId: params.execId, error: errorText(error) }));
    };
    call.signal.addEventListener("abort", cancel, { once: true });
    try {
      const result = await upstream.request("session.exec", params, { signal: call.signal });
      return commandReply(tool, timeoutMs, result);
    } finally {
      call.signal.removeEventListener("abort", cancel);
    }
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

/** How much of a failed command's output the error carries (its end, where the reason usually is). */
export const ERROR_OUTPUT_TAIL_CHARS = 4_000;

/** A finished `session.exec` as the tool's result: exit 0 → the output; anything else fails the tool with the output's end. */
export function commandReply(tool: CommandToolConfig, timeoutMs: number, result: SessionExecResult): ToolReply {
  const truncatedNote = result.truncated ? "\n[output truncated]" : "";
  if (result.exitCode === 0 && !result.timedOut && !result.aborted) return textReply(result.output + truncatedNote);
  const what = result.timedOut
    ? `timed out after ${timeoutMs} ms`
    : result.aborted
      ? "was aborted"
      : result.exitCode === null
        ? `was killed by ${result.closeSignal ?? "a signal"}`
        : `exited with ${result.exitCode}`;
  const tail = result.output.length > ERROR_OUTPUT_TAIL_CHARS ? `…${result.output.slice(-ERROR_OUTPUT_TAIL_CHARS)}` : result.output;
  return errorReply(tail.trim() ? `${tool.command} ${what}: ${tail.trimEnd()}` : `${tool.command} ${what}`);
}
