import type { ServerRequests, SessionUpdate, ToolCallUpdate } from "../../generated/acp-v1.js";
import type {
  InteractionRequestPermissionParams,
  InteractionRequestPermissionResult,
  InteractionRequestUserInputParams,
} from "../../generated/ask-v1.0.js";
import { offeredTo } from "../bridge/decision-offers.js";
import { ASK_USER_TOOL, counted, offersSessionScope, SUBMIT_PLAN_TOOL, type PermissionVote, type PlanApprovalParams, type PlanApprovalResult, type ReverseRequester, type UserInputOutcome } from "../bridge/interactions/index.js";
import type { SessionRecord } from "../bridge/session-registry.js";
import type { SessionRoles } from "../bridge/session-roles.js";
import type { Log } from "../shared/log.js";
import type { RequestCause } from "../shared/request-cause.js";
import type { AcpClient } from "./client-state.js";
import type { EventUpdates, UpdateContext } from "./event-updates.js";
import { commandToolOptions, permissionChoice, PLAN_OPTIONS, type PermissionChoice } from "./permission-options.js";
import { planEntries } from "./plan-entries.js";
import { questionAnswer, questionForm } from "./question-form.js";
import type { SessionChoices } from "./session-choices.js";

/**
 * How the core's asking (remote-asking.ts, joiner-asking.ts) reaches one ACP connection's client
 * about its session (its SessionLink): approvals and plans as `session/request_permission` with
 * their tool-call card, `ask_user` questions as `elicitation/create`. Answers come back in the
 * core's words and the core settles the interaction (the first answer wins; a request is withdrawn
 * once the interaction is settled elsewhere, and a question declined goes unanswered); only what
 * ACP alone can say is decided here: a tool rejected for the rest of the session. A client whose
 * principal may not decide (an observer) is not asked: it is shown the tool call waiting (`pending`),
 * and its outcome once another client decides, but no options that would count for nothing — an
 * empty `options` list is no ACP request, and `session/request_permission` has no way to say "watch only".
 */

export interface InteractionRequestServices {
  /** What the session's users chose for the rest of the session (tools always rejected). */
  choices: SessionChoices;
  /** Every connection's link to the same session, this one included: whether it prompts, and its client. */
  linksOfSession(): readonly { readonly prompting: boolean; readonly client: AcpClient }[];
  /** Who is asked (decision-offers.ts), and whose answers count: an observer's decides nothing, and the interaction stays pending for the others. */
  roles: Pick<SessionRoles, "heard" | "mayDecideOn">;
  log?: Log;
}

/** What the requests need of their link: its updates (tool call cards) and how it sends one. */
export interface InteractionLink {
  readonly updates: EventUpdates;
  send(update: SessionUpdate, causedBy?: RequestCause): void;
  updateContext(): UpdateContext;
}

type Permission = InteractionRequestPermissionResult;

export class InteractionRequests {
  /** Requests to the client about an interaction, by interaction id: aborted once it is settled. */
  private readonly asking = new Map<string, AbortController>();
  private readonly sessionId: string;
  private readonly updates: EventUpdates;

  constructor(
    private readonly client: AcpClient,
    record: SessionRecord,
    private readonly services: InteractionRequestServices,
    private readonly link: InteractionLink,
  ) {
    this.sessionId = record.sessionId;
    this.updates = link.updates;
  }

  /** Whether this connection is asking about the interaction. */
  isAsking(interactionId: string): boolean {
    return this.asking.has(interactionId);
  }

  /** Withdraws every request (the connection lets go of the session). */
  withdrawAll(): void {
    for (const controller of this.asking.values()) controller.abort();
  }

  /**
   * The client as the core asks it; requests go out after the answer to `cause` when given.
   * `joining`: the client attached while the interactions were pending, and a plan's panel is
   * shown before the request to approve it (the live path showed it as the plan was proposed).
   */
  requester(cause?: RequestCause, joining = false): ReverseRequester {
    return {
      // This client's answer is counted as it comes: one that was a vote leaves the other clients asked.
      requestPermission: async (_sessionId, params, signal, vote?: PermissionVote) => counted(await this.requestPermission(params, signal, cause), this.client.peer.principal, vote),
      requestUserInput: (_sessionId, params, signal) => this.requestUserInput(params, signal, cause),
      requestPlanApproval: (_sessionId, params, signal) => this.requestPlanApproval(params, signal, cause, joining),
    };
  }

  /** A command tool call waits for approval: the user is asked, unless they rejected the tool for the session. */
  private async requestPermission(params: InteractionRequestPermissionParams, signal: AbortSignal, cause?: RequestCause): Promise<Permission | undefined> {
    const { toolName } = params;
    const interactionId = params.interactionId ?? params.requestId;
    if (!(await this.offered(interactionId))) return this.watching(interactionId, toolName, `Run ${toolName}`, params.input as Record<string, unknown> | undefined, signal, cause);
    const rejected: Permission = { decision: "reject", feedback: `${toolName} is rejected for the rest of this session` };
    // A call the policy requires a decision about is decided about itself: an earlier "always" does not answer it.
    const forSession = offersSessionScope(params);
    if (forSession && this.services.choices.rejectsAlways(toolName)) return rejected;
    if (this.asking.has(interactionId)) return undefined;
    const toolCall = this.toolCallFor(interactionId, toolName, `Run ${toolName}`, params.input as Record<string, unknown> | undefined, cause);
    const options = commandToolOptions(toolName, forSession);
    const answer = await this.ask(interactionId, "session/request_permission", { sessionId: this.sessionId, toolCall, options }, signal, cause);
    if (answer === undefined) return undefined;
    const choice = answer instanceof Error ? failed(answer) : permissionChoice(answer, options);
    switch (choice.kind) {
      case "allow_once":
        return { decision: "allow_once" };
      case "allow_always":
        return { decision: "allow_always" };
      case "reject_once":
        return { decision: "reject" };
      case "reject_always":
        this.services.choices.rejectAlways(toolName);
        return rejected;
      case "cancelled":
        return { decision: "reject", feedback: "the user cancelled the turn" };
      case "unusable":
        return { decision: "reject", feedback: `no usable answer to the permission request (${choice.reason})` };
    }
  }

  /** A proposed plan: approving it lets the model carry it out (and, in plan mode, unlocks the command tools). */
  private async requestPlanApproval({ interactionId, plan }: PlanApprovalParams, signal: AbortSignal, cause: RequestCause | undefined, joining: boolean): Promise<PlanApprovalResult | undefined> {
    if (this.asking.has(interactionId)) return undefined;
    // The plan the editor missed, as its plan panel shows one, then the request to approve it.
    if (joining && !this.client.peer.closed && !signal.aborted) this.link.send({ sessionUpdate: "plan", entries: planEntries(plan) }, cause);
    if (!(await this.offered(interactionId))) return this.watching(interactionId, SUBMIT_PLAN_TOOL, "Plan for approval", { plan }, signal, cause);
    const toolCall = this.toolCallFor(interactionId, SUBMIT_PLAN_TOOL, "Plan for approval", { plan }, cause);
    const answer = await this.ask(interactionId, "session/request_permission", { sessionId: this.sessionId, toolCall, options: PLAN_OPTIONS }, signal, cause);
    if (answer === undefined) return undefined;
    const choice = answer instanceof Error ? failed(answer) : permissionChoice(answer, PLAN_OPTIONS);
    if (choice.kind === "allow_once") return { action: "approve" };
    return { action: "reject", ...(choice.kind === "unusable" ? { feedback: `no usable answer (${choice.reason})` } : {}) };
  }

  /**
   * An `ask_user` question: a form for clients that can show one. When the turn is an ACP
   * client's and no connection of the session can ask, the question is declined at once, so the
   * model asks in its reply instead of waiting for the deadline; a form declined, dismissed or
   * left empty declines it too. The core settles the outcome (remote-asking.ts).
   */
  private async requestUserInput(params: InteractionRequestUserInputParams, signal: AbortSignal, cause?: RequestCause): Promise<UserInputOutcome | undefined> {
    const interactionId = params.interactionId ?? params.requestId;
    if (this.asking.has(interactionId) || !(await this.offered(interactionId))) return undefined;
    if (!this.client.canElicit) {
      const links = this.services.linksOfSession();
      const noneCanAsk = links.some((l) => l.prompting) && !links.some((l) => l.client.canElicit && !l.client.peer.closed);
      return noneCanAsk ? { declined: "the user's editor cannot show questions; ask in your reply instead" } : undefined;
    }
    const toolCallId = this.updates.link(interactionId, ASK_USER_TOOL);
    const question = { prompt: params.prompt, ...(params.options ? { options: params.options } : {}) };
    const answer = await this.ask(interactionId, "elicitation/create", questionForm(this.sessionId, toolCallId, question), signal, cause);
    if (answer === undefined) return undefined;
    const outcome = answer instanceof Error ? { unanswered: `the question could not be shown (${answer.message})` } : questionAnswer(answer);
    return "answered" in outcome ? { response: outcome.answered } : { declined: outcome.unanswered };
  }

  /** Whether this connection's principal may decide the interaction, and so is asked about it. */
  private offered(interactionId: string): Promise<boolean> {
    return offeredTo(this.services.roles, this.sessionId, this.client.peer.principal, interactionId);
  }

  /** A client that is not asked still sees what waits: the tool call's card, announced if it was not shown yet. */
  private watching(interactionId: string, toolName: string, title: string, args: Record<string, unknown> | undefined, signal: AbortSignal, cause?: RequestCause): undefined {
    if (!this.client.peer.closed && !signal.aborted && !this.asking.has(interactionId)) this.toolCallFor(interactionId, toolName, title, args, cause);
    return undefined;
  }

  /** The tool call a permission request is about: the card already shown, or one announced now. */
  private toolCallFor(interactionId: string, toolName: string, title: string, args?: Record<string, unknown>, cause?: RequestCause): ToolCallUpdate {
    let toolCallId = this.updates.link(interactionId, toolName);
    if (!toolCallId) {
      const card = this.updates.waitingCard(interactionId, toolName, title, this.link.updateContext());
      this.link.send(card.update, cause);
      toolCallId = card.toolCallId;
    }
    return this.updates.permissionCall(toolCallId, toolName, args, this.link.updateContext());
  }

  /**
   * Sends a request about an interaction (after the answer to `cause`, when given): resolves with
   * the answer (or the failure, as an Error), or undefined when nobody answered — the connection
   * went away, or the interaction was settled meanwhile (`signal`, or the link letting go).
   */
  private async ask<M extends "session/request_permission" | "elicitation/create">(
    interactionId: string,
    method: M,
    params: ServerRequests[M]["params"],
    signal: AbortSignal,
    cause: RequestCause | undefined,
  ): Promise<unknown> {
    // A connection that went away answers nothing: the interaction waits for others, or the deadline.
    if (this.client.peer.closed || signal.aborted) return undefined;
    const controller = new AbortController();
    const withdraw = () => controller.abort();
    signal.addEventListener("abort", withdraw, { once: true });
    this.asking.set(interactionId, controller);
    try {
      const answer = await this.client.peer.request(method, params, controller.signal, cause).catch((error: unknown) => (error instanceof Error ? error : new Error(String(error))));
      if (controller.signal.aborted) return undefined;
      return await this.services.roles.heard(this.sessionId, this.client.peer.principal, answer, method, this.services.log);
    } finally {
      signal.removeEventListener("abort", withdraw);
      if (this.asking.get(interactionId) === controller) this.asking.delete(interactionId);
    }
  }
}

const failed = (error: Error): PermissionChoice => ({ kind: "unusable", reason: `the request failed: ${error.message}` });
