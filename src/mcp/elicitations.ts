import type {
  InteractionRequestPermissionParams,
  InteractionRequestPermissionResult,
  InteractionRequestUserInputParams,
  InteractionRequestUserInputResult,
} from "../../generated/ask-v1.0.js";
import { offeredTo } from "../bridge/decision-offers.js";
import { firstAnswer, InteractionError, type ReverseRequester } from "../bridge/interactions/index.js";
import type { BridgeCore } from "../bridge/bridge-core.js";
import type { Log } from "../shared/log.js";
import type { McpClient } from "./client-state.js";
import { formChoice, permissionForm, questionForm } from "./forms.js";
import { sessionMeta } from "../shared/session-references.js";
import type { SessionWatches } from "./session-watches.js";

/**
 * How the bridge's interactions reach MCP clients: an approval of a command tool and an `ask_user`
 * question become elicitation/create to every connection watching the session that can show a
 * form; the first answer of any client, of any dialect, decides (the bridge core's reverse
 * requesters, reverse-requester.ts), and the others' forms are withdrawn with
 * notifications/cancelled. A connection that cannot show forms is not asked (it answers with
 * tau-answer, or another client or the deadline decides): nothing is ever decided for it. Nor is
 * one whose principal may not decide (an observer, decision-offers.ts): it is shown no form whose
 * answer would count for nothing, and follows the interaction in the session's resource.
 */
export class McpElicitations implements ReverseRequester {
  constructor(
    private readonly core: BridgeCore,
    private readonly watches: SessionWatches,
    private readonly log?: Log,
  ) {}

  async requestPermission(sessionId: string, params: InteractionRequestPermissionParams, signal: AbortSignal): Promise<InteractionRequestPermissionResult | undefined> {
    const form = permissionForm(params);
    return firstAnswer(
      (await this.deciding(sessionId, params.interactionId ?? params.requestId)).map((client) =>
        this.ask(client, sessionId, form, signal).then((answer): InteractionRequestPermissionResult | undefined => {
          if (answer === undefined) return undefined;
          const choice = formChoice(answer);
          if (choice.kind === "approve") return { decision: choice.scope === "session" ? "acceptForSession" : "approve" };
          return { decision: "deny", feedback: choice.kind === "reject" ? choice.feedback : "no decision was chosen" };
        }),
      ),
    );
  }

  async requestUserInput(sessionId: string, params: InteractionRequestUserInputParams, signal: AbortSignal): Promise<InteractionRequestUserInputResult | undefined> {
    const form = questionForm(params);
    return firstAnswer(
      (await this.deciding(sessionId, params.interactionId ?? params.requestId)).map((client) =>
        this.ask(client, sessionId, form, signal).then((answer) => {
          if (answer === undefined) return undefined;
          const choice = formChoice(answer);
          if (choice.kind === "answer") return { response: choice.text };
          // A question the user would not answer: declined at once, so the model carries on without it.
          this.decline(sessionId, params.requestId, choice.kind === "reject" ? choice.feedback : "no answer was given");
          return undefined;
        }),
      ),
    );
  }

  /** MCP clients are asked about plans by their session watches (session-watches.ts), not through the core: nobody is asked here. */
  requestPlanApproval(): Promise<undefined> {
    return Promise.resolve(undefined);
  }

  /** The watching connections that can show a form and whose principal may decide the interaction. */
  private async deciding(sessionId: string, interactionId: string): Promise<McpClient[]> {
    const askable = this.watches.askable(sessionId);
    const offered = await Promise.all(askable.map((client) => offeredTo(this.core.roles, sessionId, client.peer.principal, interactionId)));
    return askable.filter((client, i) => offered[i] && !client.peer.closed);
  }

  /** The client's answer (or its failure, as an Error); undefined once the interaction was settled elsewhere. */
  private ask(client: McpClient, sessionId: string, form: Parameters<McpClient["peer"]["request"]>[1], signal: AbortSignal): Promise<unknown> {
    // An observer's answer is refused: it decides nothing, and the interaction stays pending for the others.
    const heard = (answer: unknown) => (signal.aborted ? undefined : this.core.roles.heard(sessionId, client.peer.principal, answer, "elicitation/create", this.log));
    return client.peer.request("elicitation/create", { ...form, _meta: sessionMeta(sessionId) }, signal, client.callIn(sessionId)).then(heard, (error: unknown) =>
      heard(error instanceof Error ? error : new Error(String(error))),
    );
  }

  private decline(sessionId: string, interactionId: string, reason: string): void {
    const record = this.core.sessions.get(sessionId);
    record?.interactions.shared.decline(interactionId, reason).catch((error: unknown) => {
      if (!(error instanceof InteractionError)) this.log?.("warn", "declining a question failed", { sessionId, error: String(error) });
    });
  }
}
