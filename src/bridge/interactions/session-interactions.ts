import type { ApprovalMode, ApprovalScope, InteractionRecord } from "../../../generated/ask-v1.0.js";
import type { SessionClientToolCallMessage, SessionClientToolCancelMessage } from "../../../generated/tau-v18.js";
import type { Log } from "../../shared/log.js";
import { MemoryInteractionStore } from "../../store/memory-interactions.js";
import type { InteractionAnswer, InteractionCounters } from "../../store/interactions.js";
import type { SessionSettings, SessionSettingsStore } from "../../store/session-settings.js";
import type { TauUpstream } from "../../tau/upstream.js";
import { draft, type EventDraft } from "../event-draft.js";
import { canonicalApprovalMode, type ApprovalModeName } from "./approval-modes.js";
import { AskUserTool } from "./ask-user-tool.js";
import { ClientToolCalls } from "./client-tool-calls.js";
import { DEFAULT_INTERACTION_DEADLINE_MS } from "./client-tools.js";
import { CommandTools } from "./command-tools.js";
import type { GatewayTool, ToolContext } from "./gateway-tool.js";
import { ASK_USER_TOOL, SUBMIT_PLAN_TOOL } from "./tool-names.js";
import type { InteractionShare } from "./interaction-share.js";
import { PendingInteractions } from "./pending-interactions.js";
import type { ReverseRequester } from "./reverse-requester.js";
import { SharedAnswers } from "./shared-answers.js";
import { SubmitPlanTool } from "./submit-plan-tool.js";
import { ToolGating } from "./tool-gating.js";
import { DEFAULT_POLICY, needsPrincipals, type ApprovalPolicy } from "./policy/policy-rules.js";
import { RECEIPTS_KEPT_PER_SESSION, SessionReceipts, type Receipt, type ReceiptSink, type ReceiptWatch } from "./policy/receipts.js";
import type { CommandToolConfig } from "./tools-config.js";
import type { Deciders } from "../../store/session-roles.js";
import type { SessionPrincipal } from "../session-principal.js";

/** The tenant a policy sees for a session created without one (a gateway with a single token, or none). */
const DEFAULT_POLICY_TENANT = "default";

/**
 * One session's interactions (DESIGN §4.4): every `session.clientTool.call` Tau sends the bridge
 * connection goes to its tool's module (ask_user, submit_plan, a command tool), which may open an
 * interaction in the session's pending table; it is resolved by whichever comes first: an
 * interaction/* or plan/* method, a reverse request's answer, the deadline (which denies), or Tau
 * cancelling the call. This class only wires the parts together and routes the clients' methods.
 * Pending interactions are shared with the other gateway replicas through the interaction store:
 * clients on any replica list and answer them (`shared`), and the answer that wins comes back here
 * to be carried out (`deliver`).
 */

export interface SessionInteractionsOptions {
  sessionId: string;
  /** The bridge connection that advertised the tools (the one Tau sends the calls to). */
  upstream: Pick<TauUpstream, "request">;
  /** Where interaction events go: the session's hub. */
  hub: InteractionEventSink;
  /** The approval mode recorded on the Tau session when it was created. */
  mode: ApprovalModeName;
  /** With replicas sharing a store: where mode changes and session-wide grants are shared, and what it held when the session was opened. */
  settings?: { store: SessionSettingsStore; stored: SessionSettings };
  commandTools: CommandToolConfig[];
  /** The operator's approval policy (absent: the default, no rules). */
  policy?: ApprovalPolicy;
  /** What the policy's session conditions look at: the session's tenant and working directory. */
  facts?: { tenant: string | undefined; cwd: string | undefined };
  /** Where each command-tool call's finished receipt goes (the audit file, span events). */
  receiptSink?: ReceiptSink;
  /** Told every receipt as each step is added (the inspector's approvals panel). */
  receiptSteps?: ReceiptWatch;
  /** Whether a principal may decide an approval with these deciders (SessionRoles.mayDecide for this session); without it, anyone may. */
  mayDecide?(principal: SessionPrincipal, deciders: Deciders): Promise<boolean>;
  /** How long an interaction waits for a decision (default 300 000 ms). */
  deadlineMs?: number;
  reverse: ReverseRequester;
  /**
   * Where the session's interactions are shared with other replicas. Without one, they are kept to
   * this object (a memory store of its own, whose answers it delivers itself).
   */
  share?: InteractionShare;
  /** The highest interaction numbers the session has used (from the store), so ids are never reused. */
  used?: InteractionCounters;
  log?: Log;
}

/** The part of a SessionHub interactions use: appending gateway events to the session's log (`key`: see SessionHub.emit). */
export interface InteractionEventSink {
  emit(draft: EventDraft, key?: string): unknown;
  /** Resolves once everything emitted so far is in the session's log here. */
  appended(): Promise<void>;
}

export class SessionInteractions {
  readonly sessionId: string;
  private readonly gating: ToolGating;
  private readonly modeListeners = new Set<(mode: ApprovalModeName) => void>();
  private readonly calls: ClientToolCalls;
  private readonly pending: PendingInteractions;
  private readonly askUser: AskUserTool;
  private readonly plans: SubmitPlanTool;
  private readonly commands: CommandTools;
  /** The tools Tau may call, by name. */
  private readonly tools: ReadonlyMap<string, GatewayTool>;
  /** Answers from clients on any replica (what the interaction/* and plan/* methods use). */
  readonly shared: SharedAnswers;
  private readonly share: InteractionShare;
  private readonly events: InteractionEventSink;
  /** Every command-tool call's lifecycle. */
  private readonly receiptBook: SessionReceipts;

  constructor(options: SessionInteractionsOptions) {
    const { sessionId, upstream, hub, mode, reverse, log } = options;
    this.sessionId = sessionId;
    this.events = hub;
    this.gating = new ToolGating({
      sessionId,
      createdWith: mode,
      ...(options.settings ? { settings: options.settings } : {}),
      changed: (changedTo) => {
        for (const listener of [...this.modeListeners]) listener(changedTo);
      },
      log,
    });
    const share = (this.share = options.share ?? this.ownShare());
    this.calls = new ClientToolCalls({
      sessionId,
      upstream,
      toolNamed: (name) => this.tools.get(name),
      cancelled: (call, reason) => {
        this.pending.cancelCall(call, `the tool call was cancelled (${reason})`);
        this.receiptBook.returned(call.message.callId, false, `cancelled by Tau: ${reason}`);
      },
      prepare: () => this.gating.refresh(),
      log,
    });
    const receipts = (this.receiptBook = new SessionReceipts(options.receiptSink, undefined, RECEIPTS_KEPT_PER_SESSION, options.receiptSteps));
    const answer: ToolContext["answer"] = (call, reply) => {
      receipts.returned(call.message.callId, reply.ok, reply.ok ? undefined : reply.error);
      this.calls.answer(call, reply);
    };
    this.pending = new PendingInteractions({
      sessionId,
      deadlineMs: options.deadlineMs ?? DEFAULT_INTERACTION_DEADLINE_MS,
      emit: (draft, key) => hub.emit(draft, key),
      logged: () => hub.appended(),
      answer,
      settled: (call) => this.calls.settled(call),
      adopt: (shared) => this.calls.adopt(shared.call as unknown as SessionClientToolCallMessage),
      share,
      used: options.used,
      log,
    });
    this.shared = new SharedAnswers(sessionId, share, {
      hear: (id, decision, principal) => this.commands.hearHeld(id, decision, principal),
      decidersOf: (id) => this.commands.decidersOf(id),
    }, options.mayDecide);
    const context: ToolContext = { sessionId, pending: this.pending, answer, reverse, log };
    this.askUser = new AskUserTool(context);
    this.plans = new SubmitPlanTool(context);
    this.commands = new CommandTools(context, {
      gating: this.gating,
      upstream,
      planApproved: () => this.plans.approved,
      policy: options.policy ?? DEFAULT_POLICY,
      facts: { tenant: options.facts?.tenant ?? DEFAULT_POLICY_TENANT, ...(options.facts?.cwd ? { cwd: options.facts.cwd } : {}) },
      receipts,
      ...(options.mayDecide ? { mayDecide: options.mayDecide } : {}),
    });
    // The gateway's own tools come last: no command tool can take their names.
    this.tools = new Map<string, GatewayTool>([
      ...options.commandTools.map((tool) => [tool.name, this.commands.serving(tool)] as const),
      [ASK_USER_TOOL, this.askUser],
      [SUBMIT_PLAN_TOOL, this.plans],
    ]);
  }

  /**
   * Who may decide the pending approval `interactionId` (on any replica): the `approvers` of the
   * policy rule that `require`d it, else "any". A dialect asks `roles.mayDecide(sessionId,
   * principal, await interactions.decidersOf(id))` to know whether a client may decide it.
   */
  decidersOf(interactionId: string): Promise<Deciders> {
    return this.shared.decidersOf(interactionId);
  }

  /** Whether only a caller with a principal may decide the pending approval `interactionId` (policy-rules.ts needsPrincipals; on any replica). */
  async needsPrincipals(interactionId: string): Promise<boolean> {
    const needs = await this.shared.needsOf(interactionId);
    return needs !== undefined && needsPrincipals(needs.deciders, needs.count);
  }

  /** The receipts of the session's command-tool calls held here: the newest finished ones, then those under way. */
  receipts(): Receipt[] {
    return this.receiptBook.list();
  }

  /** The canonical approval mode, for workspace/readState. */
  get approvalMode(): ApprovalMode {
    return canonicalApprovalMode(this.gating.mode);
  }

  /** How the session's command tools are gated now (as this replica last heard: see refreshSettings). */
  get mode(): ApprovalModeName {
    return this.gating.mode;
  }

  /**
   * Gates the session's command tools by `mode` from the next call on (calls already waiting for a
   * decision keep waiting); resolves once every replica would decide with it. The mode recorded on
   * the Tau session when it was created does not change (Tau's attributes are immutable): a single
   * gateway that restarts goes back to it, replicas sharing a store keep the change there. A change
   * is told in the session's log (`mode.updated`), once, by the replica that made it.
   */
  setMode(mode: ApprovalModeName): Promise<void> {
    const changed = mode !== this.gating.mode;
    const shared = this.gating.setMode(mode);
    if (changed) this.events.emit(draft("mode.updated", { mode, approvalMode: canonicalApprovalMode(mode) }));
    return shared;
  }

  /** Takes in a mode or grants changed through another replica (nothing to do without a shared store), before reporting them. */
  refreshSettings(): Promise<void> {
    return this.gating.refresh();
  }

  /** A mode set through another replica, as the store announced it. */
  modeSetElsewhere(mode: string): void {
    this.gating.takeMode(mode);
  }

  /** Whether a call of the command tool `toolName` may ask a person (see ToolGating.mayAsk); calls are decided when they arrive, after this. */
  mayAsk(toolName: string): boolean {
    return this.gating.mayAsk(toolName);
  }

  /** Calls `listener` with the session's mode each time it changes, through this replica (any dialect) or another; returns the unsubscribe. */
  onModeChange(listener: (mode: ApprovalModeName) => void): () => void {
    this.modeListeners.add(listener);
    return () => this.modeListeners.delete(listener);
  }

  // ── Tau's side ────────────────────────────────────────────────────────────

  onCall(message: SessionClientToolCallMessage): void {
    this.calls.onCall(message);
  }

  onCancel(message: SessionClientToolCancelMessage): void {
    this.calls.onCancel(message);
  }

  /**
   * An answer that won in the store for one of this session's interactions: it is carried out here
   * (this replica holds the call, or takes it over from one that stopped). Resolves with true once
   * Tau has the result, false when it could not be sent (the store delivers it again later).
   */
  deliver(answer: InteractionAnswer): Promise<boolean> {
    return this.pending.deliver(answer);
  }

  /** This replica takes the session's calls over: interaction ids carry on after the ones used elsewhere. */
  async catchUpNumbers(): Promise<void> {
    const { store, hostKey } = this.share;
    this.pending.raiseNumbers(await store.counters(hostKey, this.sessionId));
  }

  /** This replica observes the session with its tools as the host's owner: interactions a replica that is gone left pending end (PendingInteractions.endLeftBehind). */
  endLeftBehind(): Promise<void> {
    return this.pending.endLeftBehind();
  }

  /** Session closed or the bridge connection lost: pending interactions end, with events. */
  cancelAll(reason: string): void {
    this.pending.cancelAll(reason);
    this.calls.forgetIdle();
  }

  // ── Clients' side, on the replica holding the calls ───────────────────────
  // (Clients' methods use `shared`, which works on every replica. These see only the interactions
  // held here; their decisions still win or lose in the store, and with the memory store they are
  // carried out before they return.)

  /** Pending approvals and user-input requests held here; plans are resolved with plan/* and not listed. */
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

  /** Interactions kept to this object: a memory store of its own, whose answers come straight back here. */
  private ownShare(): InteractionShare {
    const store = new MemoryInteractionStore();
    const hostKey = "local";
    store.consume(hostKey, (answer) => this.deliver(answer));
    return { store, hostKey, replicaId: "local" };
  }
}
