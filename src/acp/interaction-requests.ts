import type { ServerRequests, SessionUpdate, ToolCallUpdate } from "../../generated/acp-v1.js";
import type { ApprovalDetails, UserInputDetails } from "../../generated/ask-v1.0.js";
import { ASK_USER_TOOL, InteractionError, SUBMIT_PLAN_TOOL } from "../bridge/interactions/index.js";
import type { SessionRecord } from "../bridge/session-registry.js";
import type { Log } from "../shared/log.js";
import type { RequestCause } from "../shared/request-cause.js";
import type { AcpClient } from "./client-state.js";
import type { EventUpdates, UpdateContext } from "./event-updates.js";
import { commandToolOptions, permissionChoice, PLAN_OPTIONS, type PermissionChoice } from "./permission-options.js";
import { questionAnswer, questionForm } from "./question-form.js";
import type { SessionChoices } from "./session-choices.js";

/**
 * The session's interactions put to one ACP connection's client (its SessionLink): approvals and
 * plans as `session/request_permission`, `ask_user` questions as `elicitation/create`, resolved
 * through the bridge core like any other client's answer; a request is withdrawn once the
 * interaction is settled elsewhere.
 */

export interface InteractionRequestServices {
  /** What the session's users chose for the rest of the session (tools always rejected). */
  choices: SessionChoices;
  /** Every connection's link to the same session, this one included: whether it prompts, and its client. */
  linksOfSession(): readonly { readonly prompting: boolean; readonly client: AcpClient }[];
  log?: Log;
}

/** What the requests need of their link: its updates (tool call cards) and how it sends one. */
export interface InteractionLink {
  readonly updates: EventUpdates;
  send(update: SessionUpdate, causedBy?: RequestCause): void;
  updateContext(): UpdateContext;
}

export class InteractionRequests {
  /** Requests to the client about an interaction, by interaction id: aborted once it is settled. */
  private readonly asking = new Map<string, AbortController>();
  private readonly sessionId: string;
  private readonly updates: EventUpdates;

  constructor(
    private readonly client: AcpClient,
    private readonly record: SessionRecord,
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

  /** A command tool call waits for approval: ask the user, unless they rejected the tool for the session. */
  askPermission(interactionId: string, approval: ApprovalDetails, cause?: RequestCause): void {
    this.ifPending(interactionId, () => this.putPermission(interactionId, approval, cause));
  }

  private putPermission(interactionId: string, approval: ApprovalDetails, cause?: RequestCause): void {
    const { toolName } = approval;
    if (this.services.choices.rejectsAlways(toolName)) {
      return this.resolve(() => this.record.interactions.shared.reject(interactionId, `${toolName} is rejected for the rest of this session`));
    }
    const toolCall = this.toolCallFor(interactionId, toolName, `Run ${toolName}`, approval.args, cause);
    const options = commandToolOptions(toolName);
    this.ask(interactionId, "session/request_permission", { sessionId: this.sessionId, toolCall, options }, cause, (answer) => {
      const choice = answer instanceof Error ? failed(answer) : permissionChoice(answer, options);
      const interactions = this.record.interactions.shared;
      switch (choice.kind) {
        case "allow_once":
          return interactions.approve(interactionId, "once");
        case "allow_always":
          return interactions.approve(interactionId, "session");
        case "reject_once":
          return interactions.reject(interactionId);
        case "reject_always":
          this.services.choices.rejectAlways(toolName);
          return interactions.reject(interactionId, `${toolName} is rejected for the rest of this session`);
        case "cancelled":
          return interactions.reject(interactionId, "the user cancelled the turn");
        case "unusable":
          return interactions.reject(interactionId, `no usable answer to the permission request (${choice.reason})`);
      }
    });
  }

  /** A proposed plan: approving it lets the model carry it out (and, in plan mode, unlocks the command tools). */
  askPlanApproval(interactionId: string, plan: string, cause?: RequestCause): void {
    if (this.asking.has(interactionId)) return;
    const toolCall = this.toolCallFor(interactionId, SUBMIT_PLAN_TOOL, "Plan for approval", { plan }, cause);
    this.ask(interactionId, "session/request_permission", { sessionId: this.sessionId, toolCall, options: PLAN_OPTIONS }, cause, (answer) => {
      const choice = answer instanceof Error ? failed(answer) : permissionChoice(answer, PLAN_OPTIONS);
      const interactions = this.record.interactions.shared;
      // This plan alone: another one proposed meanwhile has a request of its own.
      if (choice.kind === "allow_once") return interactions.decidePlan(interactionId, { action: "approve" });
      return interactions.decidePlan(interactionId, { action: "reject", ...(choice.kind === "unusable" ? { feedback: `no usable answer (${choice.reason})` } : {}) });
    });
  }

  /**
   * An `ask_user` question: a form for clients that can show one. When the turn is an ACP
   * client's and no connection of the session can ask, the question is declined at once, so the
   * model asks in its reply instead of waiting for the deadline.
   */
  askQuestion(interactionId: string, question: UserInputDetails, cause?: RequestCause): void {
    this.ifPending(interactionId, () => this.putQuestion(interactionId, question, cause));
  }

  private putQuestion(interactionId: string, question: UserInputDetails, cause?: RequestCause): void {
    if (!this.client.canElicit) {
      const links = this.services.linksOfSession();
      if (links.some((l) => l.prompting) && !links.some((l) => l.client.canElicit && !l.client.peer.closed)) {
        this.resolve(() => this.record.interactions.shared.decline(interactionId, "the user's editor cannot show questions; ask in your reply instead"));
      }
      return;
    }
    const toolCallId = this.updates.link(interactionId, ASK_USER_TOOL);
    this.ask(interactionId, "elicitation/create", questionForm(this.sessionId, toolCallId, question), cause, (answer) => {
      const outcome = answer instanceof Error ? { unanswered: `the question could not be shown (${answer.message})` } : questionAnswer(answer);
      const interactions = this.record.interactions.shared;
      return "answered" in outcome ? interactions.respond(interactionId, outcome.answered) : interactions.decline(interactionId, outcome.unanswered);
    });
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
   * Sends a request about an interaction (after the answer to `cause`, when given) and acts on the
   * answer (or on the failure, as an Error), unless the interaction was settled meanwhile (its
   * request is then aborted and the answer ignored).
   */
  private ask<M extends "session/request_permission" | "elicitation/create">(
    interactionId: string,
    method: M,
    params: ServerRequests[M]["params"],
    cause: RequestCause | undefined,
    decide: (answer: unknown) => Promise<void>,
  ): void {
    // A connection that went away answers nothing: the interaction waits for others, or the deadline.
    if (this.client.peer.closed) return;
    const controller = new AbortController();
    this.asking.set(interactionId, controller);
    this.client.peer.request(method, params, controller.signal, cause).then(
      (answer) => {
        if (!controller.signal.aborted) this.resolve(() => decide(answer));
      },
      (error: unknown) => {
        if (!controller.signal.aborted) this.resolve(() => decide(error instanceof Error ? error : new Error(String(error))));
      },
    ).finally(() => {
      if (this.asking.get(interactionId) === controller) this.asking.delete(interactionId);
    });
  }

  stopAsking(interactionId: string): void {
    this.asking.get(interactionId)?.abort();
    this.asking.delete(interactionId);
  }

  /** Runs a resolution; one that lost the race with another client's (on any replica, or the deadline) changes nothing. */
  private resolve(action: () => Promise<void>): void {
    action().catch((error: unknown) => {
      if (error instanceof InteractionError) return;
      this.services.log?.("warn", "resolving an interaction failed", { sessionId: this.sessionId, error: String(error) });
    });
  }

  /** Runs `ask` if the interaction is still pending (on any replica) and this connection is not asking about it yet. */
  private ifPending(interactionId: string, ask: () => void): void {
    if (this.asking.has(interactionId)) return;
    this.record.interactions.shared.list().then(
      (pending) => {
        if (pending.some((i) => i.id === interactionId) && !this.asking.has(interactionId)) ask();
      },
      (error: unknown) => this.services.log?.("warn", "listing pending interactions failed", { sessionId: this.sessionId, error: String(error) }),
    );
  }

}

const failed = (error: Error): PermissionChoice => ({ kind: "unusable", reason: `the request failed: ${error.message}` });
