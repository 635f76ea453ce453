import type {
  ApprovalInteraction,
  ApprovalMode,
  ApprovalScope,
  InteractionRecord,
  UserInputInteraction,
} from "../../../generated/ask-v1.0.js";
import type {
  SessionClientToolAckResult,
  SessionClientToolCallMessage,
  SessionClientToolCancelMessage,
} from "../../../generated/tau-v18.js";
import type { TauUpstream, UpstreamLog } from "../../tau/upstream.js";
import type { EventDraft } from "../event-draft.js";
import { canonicalApprovalMode, type ApprovalModeName } from "./approval-modes.js";
import { argumentProblems } from "./argument-schemas.js";
import { ASK_USER_PARAMETERS, DEFAULT_INTERACTION_DEADLINE_MS, SUBMIT_PLAN_PARAMETERS } from "./client-tools.js";
import { runCommandTool } from "./command-runner.js";
import { decisionGrant } from "./decisions.js";
import { InteractionError } from "./interaction-error.js";
import { InteractionIds } from "./interaction-ids.js";
import type { ReverseRequester } from "./reverse-requester.js";
import { errorReply, textReply, type ToolReply } from "./tool-reply.js";
import { ASK_USER_TOOL, SUBMIT_PLAN_TOOL } from "./tool-names.js";
import type { CommandToolConfig } from "./tools-config.js";

/**
 * One session's interactions (DESIGN §4.4): every `session.clientTool.call` Tau sends the bridge
 * connection becomes an approval, a user-input request or a plan, resolved by whichever comes
 * first: an interaction/* or plan/* method, a reverse request's answer, the deadline (which
 * denies: consent is never assumed), or Tau cancelling the call. Each call gets exactly one
 * `session.clientTool.result`, except a call Tau cancelled, which gets none (spec §7).
 */

export interface SessionInteractionsOptions {
  sessionId: string;
  /** The bridge connection that advertised the tools (the one Tau sends the calls to). */
  upstream: Pick<TauUpstream, "request">;
  /** Where interaction events go: the session's hub. */
  hub: InteractionEventSink;
  mode: ApprovalModeName;
  commandTools: CommandToolConfig[];
  /** How long an interaction waits for a decision (default 300 000 ms). */
  deadlineMs?: number;
  reverse: ReverseRequester;
  log?: UpstreamLog;
}

/** The part of a SessionHub interactions use: appending gateway events to the session's log. */
export interface InteractionEventSink {
  emit(draft: EventDraft): unknown;
}

/** Scopes a grant may have here; `project` needs per-workspace grants the gateway does not keep. */
const ALLOWED_SCOPES: ApprovalScope[] = ["once", "session"];

interface Call {
  readonly message: SessionClientToolCallMessage;
  /** Aborted when Tau cancels the call: stops a running command. */
  readonly abort: AbortController;
  /** A result was sent or Tau cancelled the call: nothing more may be sent for it. */
  finished: boolean;
  /** The interaction the call is waiting for, while it waits. */
  interactionId?: string;
  /** An approved command is running for it. */
  running?: boolean;
}

interface PendingBase {
  readonly id: string;
  readonly call: Call;
  /** Aborted once the interaction is settled, so other clients stop asking their users. */
  readonly asking: AbortController;
  timer?: NodeJS.Timeout;
}
interface PendingApproval extends PendingBase {
  readonly kind: "approval";
  readonly tool: CommandToolConfig;
  readonly payload: ApprovalInteraction["payload"];
}
interface PendingInput extends PendingBase {
  readonly kind: "user_input";
  readonly payload: UserInputInteraction["payload"];
}
interface PendingPlan extends PendingBase {
  readonly kind: "plan";
  readonly plan: string;
}
type Pending = PendingApproval | PendingInput | PendingPlan;

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);
const errorText = (error: unknown) => (error instanceof Error ? error.message : String(error));

/** "300 s" for whole seconds, "1500 ms" otherwise. */
const duration = (ms: number) => (ms % 1000 === 0 ? `${ms / 1000} s` : `${ms} ms`);

export class SessionInteractions {
  readonly sessionId: string;
  private readonly upstream: Pick<TauUpstream, "request">;
  private readonly hub: InteractionEventSink;
  private readonly mode: ApprovalModeName;
  private readonly tools: ReadonlyMap<string, CommandToolConfig>;
  private readonly deadlineMs: number;
  private readonly reverse: ReverseRequester;
  private readonly log: UpstreamLog | undefined;
  private readonly ids = new InteractionIds();
  /** Calls Tau made that have not been answered or cancelled yet, by callId. */
  private readonly calls = new Map<string, Call>();
  /** Unsettled interactions by id, in creation order. */
  private readonly pending = new Map<string, Pending>();
  /** Command tools granted with scope session. */
  private readonly grants = new Set<string>();
  private planApproved = false;

  constructor(options: SessionInteractionsOptions) {
    this.sessionId = options.sessionId;
    this.upstream = options.upstream;
    this.hub = options.hub;
    this.mode = options.mode;
    this.tools = new Map(options.commandTools.map((tool) => [tool.name, tool]));
    this.deadlineMs = options.deadlineMs ?? DEFAULT_INTERACTION_DEADLINE_MS;
    this.reverse = options.reverse;
    this.log = options.log;
  }

  /** The canonical approval mode, for workspace/readState. */
  get approvalMode(): ApprovalMode {
    return canonicalApprovalMode(this.mode);
  }

  // ── Tau's side ────────────────────────────────────────────────────────────

  onCall(message: SessionClientToolCallMessage): void {
    if (message.sessionId !== this.sessionId || this.calls.has(message.callId)) {
      this.log?.("warn", "client-tool call ignored: wrong session or repeated call id", {
        sessionId: this.sessionId,
        callSessionId: message.sessionId,
        callId: message.callId,
      });
      return;
    }
    const call: Call = { message, abort: new AbortController(), finished: false };
    this.calls.set(message.callId, call);
    this.start(call).catch((error: unknown) => {
      this.log?.("error", "client-tool call failed", { sessionId: this.sessionId, callId: message.callId, error: errorText(error) });
      this.finish(call, errorReply(`the gateway failed to handle the call: ${errorText(error)}`));
    });
  }

  onCancel(message: SessionClientToolCancelMessage): void {
    const call = this.calls.get(message.callId);
    if (!call || message.sessionId !== this.sessionId) return;
    // Tau has given up on the call: stop everything and send nothing further (spec §7).
    call.finished = true;
    this.calls.delete(message.callId);
    call.abort.abort();
    const interaction = call.interactionId === undefined ? undefined : this.pending.get(call.interactionId);
    if (interaction) this.cancel(interaction, `the tool call was cancelled (${message.reason})`);
  }

  /** Session closed or the bridge connection lost: pending interactions end, with events. */
  cancelAll(reason: string): void {
    for (const interaction of [...this.pending.values()]) {
      this.cancel(interaction, reason);
      // Tell Tau, if it can still hear it, so the turn does not wait for its own deadline.
      this.finish(interaction.call, errorReply(`cancelled: ${reason}`));
    }
    // Calls still waiting for their ack must not turn into interactions afterwards. (Commands
    // already running finish on their own: their result, or its failure, is still the answer.)
    for (const call of [...this.calls.values()]) {
      if (call.interactionId === undefined && !call.running) this.drop(call);
    }
  }

  // ── Clients' side ─────────────────────────────────────────────────────────

  /** Pending approvals and user-input requests; plans are resolved with plan/* and not listed. */
  list(): InteractionRecord[] {
    const records: InteractionRecord[] = [];
    for (const p of this.pending.values()) {
      if (p.kind === "approval") records.push({ id: p.id, kind: "approval", status: "pending", payload: p.payload });
      else if (p.kind === "user_input") records.push({ id: p.id, kind: "user_input", status: "pending", payload: p.payload });
    }
    return records;
  }

  approve(interactionId: string, scope: ApprovalScope = "once"): void {
    const approval = this.pendingApproval(interactionId);
    this.grant(approval, checkedScope(scope));
  }

  reject(interactionId: string, feedback?: string): void {
    this.deny(this.pendingApproval(interactionId), feedback);
  }

  approveAll(scope: ApprovalScope = "once"): number {
    const checked = checkedScope(scope);
    const approvals = this.pendingOfKind("approval");
    for (const approval of approvals) this.grant(approval, checked);
    return approvals.length;
  }

  rejectAll(feedback?: string): number {
    const approvals = this.pendingOfKind("approval");
    for (const approval of approvals) this.deny(approval, feedback);
    return approvals.length;
  }

  respond(interactionId: string, response: string): void {
    const p = this.pending.get(interactionId);
    if (p?.kind !== "user_input") throw new InteractionError("interaction_not_found", `no pending user-input request ${interactionId}`);
    this.answer(p, response);
  }

  approvePlan(): void {
    const plans = this.pendingPlans();
    this.planApproved = true;
    for (const p of plans) {
      this.settle(p);
      this.emit({ type: "plan.approved", payload: { id: p.id, plan: p.plan } });
      this.finish(p.call, textReply("The user approved the plan. Carry it out now."));
    }
  }

  rejectPlan(feedback?: string): void {
    for (const p of this.pendingPlans()) {
      this.settle(p);
      this.emit({ type: "plan.rejected", payload: { id: p.id, plan: p.plan, ...(feedback ? { feedback } : {}) } });
      const said = feedback ? ` Their feedback: ${feedback}` : "";
      this.finish(p.call, textReply(`The user rejected the plan.${said} Do not carry it out; revise it and submit it again, or ask the user how to proceed.`));
    }
  }

  // ── Calls → interactions ──────────────────────────────────────────────────

  private async start(call: Call): Promise<void> {
    const { sessionId, callId } = call.message;
    let ack: SessionClientToolAckResult;
    try {
      ack = await this.upstream.request("session.clientTool.ack", { sessionId, callId });
    } catch (error) {
      // Without an accepted ack the call cannot be answered (Tau rejects ok results before it).
      this.log?.("warn", "session.clientTool.ack failed", { sessionId, callId, error: errorText(error) });
      this.drop(call);
      return;
    }
    if (!ack.accepted) {
      this.log?.("info", "Tau did not accept the ack; the call is over", { sessionId, callId, toolName: call.message.toolName });
      this.drop(call);
      return;
    }
    if (call.finished) return; // cancelled while the ack was on its way
    this.dispatch(call);
  }

  private dispatch(call: Call): void {
    const { toolName, arguments: args } = call.message;
    if (toolName === ASK_USER_TOOL) return this.askUser(call, args);
    if (toolName === SUBMIT_PLAN_TOOL) return this.proposePlan(call, args);
    const tool = this.tools.get(toolName);
    if (!tool) return this.finish(call, errorReply(`unknown tool ${JSON.stringify(toolName)}: the gateway does not provide it`));
    this.commandCall(call, tool, args);
  }

  private commandCall(call: Call, tool: CommandToolConfig, args: unknown): void {
    if (this.rejectInvalid(call, tool.parameters, args)) return;
    if (this.mode === "auto" || this.mode === "never") return this.run(call, tool);
    if (this.mode === "plan" && !this.planApproved) {
      return this.finish(
        call,
        errorReply(`${tool.name} is not available until a plan is approved: propose one with ${SUBMIT_PLAN_TOOL} and wait for the user's decision`),
      );
    }
    if (this.grants.has(tool.name)) {
      // Granted for the session: no question, but the decision still shows in the event stream.
      const id = this.ids.next("approval");
      this.emit({ type: "approval.updated", payload: { id, status: "approved", scope: "session" } });
      return this.run(call, tool);
    }
    const approval = this.open<PendingApproval>({
      kind: "approval",
      id: this.ids.next("approval"),
      call,
      tool,
      asking: new AbortController(),
      payload: {
        toolName: tool.name,
        ...(isRecord(args) ? { args } : {}),
        message: `Tool '${tool.name}' runs ${tool.command} in the session's environment with these arguments.`,
        allowedScopes: ALLOWED_SCOPES,
      },
    });
    this.emit({ type: "approval.required", payload: { id: approval.id, ...approval.payload } });
    if (!this.isPending(approval)) return; // settled by a listener of the event
    this.reverse
      .requestPermission(
        this.sessionId,
        {
          requestId: approval.id,
          toolName: tool.name,
          ...(args === undefined ? {} : { input: args }),
          riskLevel: "medium",
          reason: `Tool '${tool.name}' requires approval`,
          sessionId: this.sessionId,
          interactionId: approval.id,
        },
        approval.asking.signal,
      )
      .then(
        (answer) => {
          if (!this.isPending(approval)) return;
          if (answer === undefined) {
            this.log?.("debug", "no client can answer the permission request; waiting for interaction/* or the deadline", {
              sessionId: this.sessionId,
              interactionId: approval.id,
            });
            return;
          }
          const grant = decisionGrant(answer.decision);
          if (grant === "denied") this.deny(approval, answer.feedback ?? answer.reason);
          else this.grant(approval, grant);
        },
        (error: unknown) => {
          // An error is not consent: deny (fail closed).
          if (this.isPending(approval)) this.deny(approval, `permission request failed: ${errorText(error)}`);
        },
      );
  }

  private askUser(call: Call, args: unknown): void {
    if (this.rejectInvalid(call, ASK_USER_PARAMETERS, args)) return;
    const { question, options } = args as { question: string; options?: string[] };
    const input = this.open<PendingInput>({
      kind: "user_input",
      id: this.ids.next("user_input"),
      call,
      asking: new AbortController(),
      payload: { prompt: question, ...(options ? { options } : {}) },
    });
    this.emit({ type: "input.requested", payload: { id: input.id, ...input.payload } });
    if (!this.isPending(input)) return;
    this.reverse
      .requestUserInput(
        this.sessionId,
        { requestId: input.id, ...input.payload, sessionId: this.sessionId, interactionId: input.id },
        input.asking.signal,
      )
      .then(
        (answer) => {
          if (answer !== undefined && this.isPending(input)) this.answer(input, answer.response);
        },
        (error: unknown) => {
          // No answer is not an answer: keep waiting for interaction/respond or the deadline.
          if (this.isPending(input)) {
            this.log?.("warn", "user-input request failed", { sessionId: this.sessionId, interactionId: input.id, error: errorText(error) });
          }
        },
      );
  }

  private proposePlan(call: Call, args: unknown): void {
    if (this.rejectInvalid(call, SUBMIT_PLAN_PARAMETERS, args)) return;
    const { plan } = args as { plan: string };
    const proposal = this.open<PendingPlan>({ kind: "plan", id: this.ids.next("plan"), call, asking: new AbortController(), plan });
    this.emit({ type: "plan.proposed", payload: { id: proposal.id, plan } });
  }

  // ── Resolutions ───────────────────────────────────────────────────────────

  private grant(approval: PendingApproval, scope: "once" | "session"): void {
    this.settle(approval);
    if (scope === "session") this.grants.add(approval.tool.name);
    this.emit({ type: "approval.updated", payload: { id: approval.id, status: "approved", ...(scope === "session" ? { scope } : {}) } });
    this.run(approval.call, approval.tool);
  }

  private deny(approval: PendingApproval, feedback?: string): void {
    this.settle(approval);
    this.emit({ type: "approval.updated", payload: { id: approval.id, status: "rejected", ...(feedback ? { feedback } : {}) } });
    this.finish(approval.call, errorReply(feedback ? `rejected by the user: ${feedback}` : "rejected by the user"));
  }

  private answer(input: PendingInput, response: string): void {
    this.settle(input);
    this.emit({ type: "input.resolved", payload: { id: input.id, status: "responded", response } });
    this.finish(input.call, textReply(response));
  }

  /** The deadline passed with nobody deciding: deny, never assume consent. */
  private expire(p: Pending): void {
    this.settle(p);
    const reason = `nobody decided within ${duration(this.deadlineMs)}`;
    switch (p.kind) {
      case "approval":
        this.emit({ type: "approval.updated", payload: { id: p.id, status: "expired", reason } });
        this.finish(p.call, errorReply(`not approved: ${reason}, so the call was denied`));
        break;
      case "user_input":
        this.emit({ type: "input.resolved", payload: { id: p.id, status: "expired", reason } });
        this.finish(p.call, errorReply(`the user did not answer within ${duration(this.deadlineMs)}`));
        break;
      case "plan":
        this.emit({ type: "plan.rejected", payload: { id: p.id, plan: p.plan, status: "expired", reason } });
        this.finish(p.call, errorReply(`the plan was not approved: ${reason}; do not carry it out`));
        break;
    }
  }

  /** Ends an interaction without a decision; the caller decides whether Tau still gets a result. */
  private cancel(p: Pending, reason: string): void {
    this.settle(p);
    switch (p.kind) {
      case "approval":
        this.emit({ type: "approval.updated", payload: { id: p.id, status: "cancelled", reason } });
        break;
      case "user_input":
        this.emit({ type: "input.resolved", payload: { id: p.id, status: "cancelled", reason } });
        break;
      case "plan":
        this.emit({ type: "plan.rejected", payload: { id: p.id, plan: p.plan, status: "cancelled", reason } });
        break;
    }
  }

  private run(call: Call, tool: CommandToolConfig): void {
    call.running = true;
    runCommandTool(this.upstream, this.sessionId, tool, call.message.arguments, call.abort.signal, this.log)
      .catch((error: unknown) => errorReply(`could not run ${tool.command}: ${errorText(error)}`))
      .then((reply) => {
        call.running = false;
        if (reply) this.finish(call, reply);
      });
  }

  // ── Bookkeeping ───────────────────────────────────────────────────────────

  private open<P extends Pending>(p: P): P {
    this.pending.set(p.id, p);
    p.call.interactionId = p.id;
    p.timer = setTimeout(() => {
      if (this.isPending(p)) this.expire(p);
    }, this.deadlineMs);
    p.timer.unref?.();
    return p;
  }

  /** Removes a pending interaction (first resolution wins) and stops everything still asking. */
  private settle(p: Pending): void {
    this.pending.delete(p.id);
    p.call.interactionId = undefined;
    clearTimeout(p.timer);
    p.asking.abort();
  }

  private isPending(p: Pending): boolean {
    return this.pending.get(p.id) === p;
  }

  private pendingApproval(interactionId: string): PendingApproval {
    const p = this.pending.get(interactionId);
    if (p?.kind !== "approval") throw new InteractionError("interaction_not_found", `no pending approval ${interactionId}`);
    return p;
  }

  private pendingOfKind(kind: "approval"): PendingApproval[] {
    return [...this.pending.values()].filter((p): p is PendingApproval => p.kind === kind);
  }

  private pendingPlans(): PendingPlan[] {
    const plans = [...this.pending.values()].filter((p): p is PendingPlan => p.kind === "plan");
    if (plans.length === 0) throw new InteractionError("plan_not_found", "no plan is pending");
    return plans;
  }

  /** Answers an invalid call at once; true when it did. */
  private rejectInvalid(call: Call, parameters: object, args: unknown): boolean {
    const problems = argumentProblems(parameters, args);
    if (problems === undefined) return false;
    this.finish(call, errorReply(`invalid arguments: ${problems}`));
    return true;
  }

  /** The call's one result. Later attempts (and calls Tau cancelled) send nothing. */
  private finish(call: Call, reply: ToolReply): void {
    if (call.finished) return;
    this.drop(call);
    const { sessionId, callId } = call.message;
    this.upstream.request("session.clientTool.result", { sessionId, callId, ...reply }).then(
      (result) => {
        if (!result.accepted) this.log?.("info", "Tau did not accept the tool result (the call had ended)", { sessionId, callId });
      },
      (error: unknown) => this.log?.("warn", "session.clientTool.result failed", { sessionId, callId, error: errorText(error) }),
    );
  }

  private drop(call: Call): void {
    call.finished = true;
    this.calls.delete(call.message.callId);
  }

  private emit(draft: EventDraft): void {
    this.hub.emit(draft);
  }
}

/** once and session are honoured; project (per-workspace grants) is refused rather than downgraded. */
function checkedScope(scope: ApprovalScope): "once" | "session" {
  if (scope === "once" || scope === "session") return scope;
  throw new InteractionError(
    "invalid_params",
    `scope ${JSON.stringify(scope)} is not supported: the gateway grants tools once or for the session (allowed: ${ALLOWED_SCOPES.join(", ")})`,
  );
}
