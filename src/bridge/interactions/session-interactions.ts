import type { ApprovalMode, ApprovalScope, InteractionRecord } from "../../../generated/ask-v1.0.js";
import type { SessionClientToolCallMessage, SessionClientToolCancelMessage } from "../../../generated/tau-v18.js";
import type { Log } from "../../shared/log.js";
import type { TauUpstream } from "../../tau/upstream.js";
import type { EventDraft } from "../event-draft.js";
import { canonicalApprovalMode, type ApprovalModeName } from "./approval-modes.js";
import { AskUserTool } from "./ask-user-tool.js";
import { ClientToolCalls } from "./client-tool-calls.js";
import { DEFAULT_INTERACTION_DEADLINE_MS } from "./client-tools.js";
import { CommandTools } from "./command-tools.js";
import type { GatewayTool, ToolContext } from "./gateway-tool.js";
import { PendingInteractions } from "./pending-interactions.js";
import type { ReverseRequester } from "./reverse-requester.js";
import { SubmitPlanTool } from "./submit-plan-tool.js";
import { ASK_USER_TOOL, SUBMIT_PLAN_TOOL } from "./tool-names.js";
import type { CommandToolConfig } from "./tools-config.js";

/**
 * One session's interactions (DESIGN §4.4): every `session.clientTool.call` Tau sends the bridge
 * connection goes to its tool's module (ask_user, submit_plan, a command tool), which may open an
 * interaction in the session's pending table; it is resolved by whichever comes first: an
 * interaction/* or plan/* method, a reverse request's answer, the deadline (which denies), or Tau
 * cancelling the call. This class only wires the parts together and routes the clients' methods.
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
  log?: Log;
}

/** The part of a SessionHub interactions use: appending gateway events to the session's log. */
export interface InteractionEventSink {
  emit(draft: EventDraft): unknown;
}

export class SessionInteractions {
  readonly sessionId: string;
  private modeName: ApprovalModeName;
  private readonly calls: ClientToolCalls;
  private readonly pending: PendingInteractions;
  private readonly askUser: AskUserTool;
  private readonly plans: SubmitPlanTool;
  private readonly commands: CommandTools;
  /** The tools Tau may call, by name. */
  private readonly tools: ReadonlyMap<string, GatewayTool>;

  constructor(options: SessionInteractionsOptions) {
    const { sessionId, upstream, hub, mode, reverse, log } = options;
    this.sessionId = sessionId;
    this.modeName = mode;
    this.calls = new ClientToolCalls({
      sessionId,
      upstream,
      toolNamed: (name) => this.tools.get(name),
      cancelled: (call, reason) => this.pending.cancelCall(call, `the tool call was cancelled (${reason})`),
      log,
    });
    const answer: ToolContext["answer"] = (call, reply) => this.calls.answer(call, reply);
    this.pending = new PendingInteractions({ deadlineMs: options.deadlineMs ?? DEFAULT_INTERACTION_DEADLINE_MS, emit: (draft) => hub.emit(draft), answer });
    const context: ToolContext = { sessionId, pending: this.pending, answer, reverse, log };
    this.askUser = new AskUserTool(context);
    this.plans = new SubmitPlanTool(context);
    this.commands = new CommandTools(context, { mode: () => this.modeName, upstream, planApproved: () => this.plans.approved });
    // The gateway's own tools come last: no command tool can take their names.
    this.tools = new Map<string, GatewayTool>([
      ...options.commandTools.map((tool) => [tool.name, this.commands.serving(tool)] as const),
      [ASK_USER_TOOL, this.askUser],
      [SUBMIT_PLAN_TOOL, this.plans],
    ]);
  }

  /** The canonical approval mode, for workspace/readState. */
  get approvalMode(): ApprovalMode {
    return canonicalApprovalMode(this.modeName);
  }

  /** How the session's command tools are gated now. */
  get mode(): ApprovalModeName {
    return this.modeName;
  }

  /**
   * Gates the session's command tools by `mode` from the next call on (calls already waiting for a
   * decision keep waiting). The mode recorded on the
   * Tau session when it was created does not change (Tau's attributes are immutable), so a
   * gateway that restarts goes back to it.
   */
  setMode(mode: ApprovalModeName): void {
    this.modeName = mode;
  }

  // ── Tau's side ────────────────────────────────────────────────────────────

  onCall(message: SessionClientToolCallMessage): void {
    this.calls.onCall(message);
  }

  onCancel(message: SessionClientToolCancelMessage): void {
    this.calls.onCancel(message);
  }

  /** Session closed or the bridge connection lost: pending interactions end, with events. */
  cancelAll(reason: string): void {
    this.pending.cancelAll(reason);
    this.calls.forgetIdle();
  }

  // ── Clients' side ─────────────────────────────────────────────────────────

  /** Pending approvals and user-input requests; plans are resolved with plan/* and not listed. */
  list(): InteractionRecord[] {
    return this.pending.records();
  }

  approve(interactionId: string, scope?: ApprovalScope): void {
    this.commands.approve(interactionId, scope);
  }

  reject(interactionId: string, feedback?: string): void {
    this.commands.reject(interactionId, feedback);
  }

  approveAll(scope?: ApprovalScope): number {
    return this.commands.approveAll(scope);
  }

  rejectAll(feedback?: string): number {
    return this.commands.rejectAll(feedback);
  }

  respond(interactionId: string, response: string): void {
    this.askUser.respond(interactionId, response);
  }

  /** A user-input request nobody will answer (the user declined, or their client cannot ask): the tool fails with `reason`. */
  decline(interactionId: string, reason: string): void {
    this.askUser.decline(interactionId, reason);
  }

  approvePlan(): void {
    this.plans.approve();
  }

  rejectPlan(feedback?: string): void {
    this.plans.reject(feedback);
  }
}
