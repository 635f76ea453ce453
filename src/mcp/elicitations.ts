import type {
  InteractionRequestPermissionParams,
  InteractionRequestPermissionResult,
  InteractionRequestUserInputParams,
} from "../../generated/ask-v1.0.js";
import { offeredTo } from "../bridge/decision-offers.js";
import { counted, firstAnswer, type PermissionVote, type PlanApprovalParams, type PlanApprovalResult, type ReverseRequester, type UserInputOutcome } from "../bridge/interactions/index.js";
import type { SessionRoles } from "../bridge/session-roles.js";
import type { Log } from "../shared/log.js";
import type { McpClient } from "./client-state.js";
import { formChoice, permissionForm, planForm, questionForm } from "./forms.js";
import { sessionMeta } from "../shared/session-references.js";

/**
 * How the core's asking reaches MCP clients: an approval of a command tool, an `ask_user` question
 * and a plan up for approval each become an elicitation/create form (forms.ts). `of(client)` is
 * one connection as the core asks it (a session watch puts plans and what was pending when it began
 * to it through the core's RemoteAsking and joiner asking, session-watches.ts); this object, added
 * to the core's reverse requesters, asks every connection watching the session that can show a
 * form. The first answer of any client, of any dialect, decides, and the others' forms are
 * withdrawn with notifications/cancelled. A connection that cannot show forms is not asked (it
 * answers with tau-answer, or another client or the deadline decides), and one that goes away
 * answered nothing: nothing is ever decided for it. Nor is one whose principal may not decide (an
 * observer, decision-offers.ts): it is shown no form whose answer would count for nothing, and
 * follows the interaction in the session's resource.
 */
export class McpElicitations implements ReverseRequester {
  constructor(
    private readonly roles: Pick<SessionRoles, "heard" | "mayDecideOn">,
    /** The connections watching the session that can show forms. */
    private readonly askable: (sessionId: string) => McpClient[],
    private readonly log?: Log,
  ) {}

  /** One connection as the core asks it: undefined answers when it cannot show forms. */
  of(client: McpClient): ReverseRequester {
    return {
      requestPermission: (sessionId, params, signal, vote) => this.permission(client, sessionId, params, signal, vote),
      requestUserInput: (sessionId, params, signal) => this.question(client, sessionId, params, signal),
      requestPlanApproval: (sessionId, params, signal) => this.plan(client, sessionId, params, signal),
    };
  }

  requestPermission(sessionId: string, params: InteractionRequestPermissionParams, signal: AbortSignal, vote?: PermissionVote): Promise<InteractionRequestPermissionResult | undefined> {
    return firstAnswer(this.askable(sessionId).map((client) => this.permission(client, sessionId, params, signal, vote)));
  }

  requestUserInput(sessionId: string, params: InteractionRequestUserInputParams, signal: AbortSignal): Promise<UserInputOutcome | undefined> {
    return firstAnswer(this.askable(sessionId).map((client) => this.question(client, sessionId, params, signal)));
  }

  requestPlanApproval(sessionId: string, params: PlanApprovalParams, signal: AbortSignal): Promise<PlanApprovalResult | undefined> {
    return firstAnswer(this.askable(sessionId).map((client) => this.plan(client, sessionId, params, signal)));
  }

  /** One client's answer, counted as it comes (`vote`): one that was a vote leaves the others asked. */
  private async permission(client: McpClient, sessionId: string, params: InteractionRequestPermissionParams, signal: AbortSignal, vote?: PermissionVote): Promise<InteractionRequestPermissionResult | undefined> {
    const answer = await this.ask(client, sessionId, params.interactionId ?? params.requestId, permissionForm(params), signal);
    if (answer === undefined) return undefined;
    const choice = formChoice(answer);
    if (choice.kind === "approve") return counted({ decision: choice.scope === "session" ? "acceptForSession" : "approve" }, client.peer.principal, vote);
    return counted({ decision: "deny", feedback: choice.kind === "reject" ? choice.feedback : "no decision was chosen" }, client.peer.principal, vote);
  }

  private async question(client: McpClient, sessionId: string, params: InteractionRequestUserInputParams, signal: AbortSignal): Promise<UserInputOutcome | undefined> {
    const answer = await this.ask(client, sessionId, params.interactionId ?? params.requestId, questionForm(params), signal);
    if (answer === undefined) return undefined;
    const choice = formChoice(answer);
    if (choice.kind === "answer") return { response: choice.text };
    // A form declined or dismissed (or one that failed): the question goes unanswered at once, so the model carries on without it.
    return { declined: choice.kind === "reject" ? choice.feedback : "no answer was given" };
  }

  /** Anything but choosing to approve rejects the plan (consent is never inferred). */
  private async plan(client: McpClient, sessionId: string, { interactionId, plan }: PlanApprovalParams, signal: AbortSignal): Promise<PlanApprovalResult | undefined> {
    const answer = await this.ask(client, sessionId, interactionId, planForm(sessionId, plan), signal);
    if (answer === undefined) return undefined;
    const choice = formChoice(answer);
    if (choice.kind === "approve") return { action: "approve" };
    return { action: "reject", ...(choice.kind === "reject" ? { feedback: choice.feedback } : {}) };
  }

  /** The client's answer (or its failure, as an Error); undefined when it cannot be asked, went away, or the interaction was settled elsewhere. */
  private async ask(client: McpClient, sessionId: string, interactionId: string, form: Parameters<McpClient["peer"]["request"]>[1], signal: AbortSignal): Promise<unknown> {
    if (!client.canElicit || signal.aborted) return undefined;
    if (!(await offeredTo(this.roles, sessionId, client.peer.principal, interactionId)) || signal.aborted || client.peer.closed) return undefined;
    // An observer's answer is refused: it decides nothing, and the interaction stays pending for the others.
    const heard = (answer: unknown) => (signal.aborted ? undefined : this.roles.heard(sessionId, client.peer.principal, answer, "elicitation/create", this.log));
    return client.peer.request("elicitation/create", { ...form, _meta: sessionMeta(sessionId) }, signal, client.callIn(sessionId)).then(heard, (error: unknown) =>
      client.peer.closed ? undefined : heard(error instanceof Error ? error : new Error(String(error))),
    );
  }
}
