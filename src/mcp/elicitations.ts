import type {
  InteractionRequestPermissionParams,
  InteractionRequestPermissionResult,
  InteractionRequestUserInputParams,
  InteractionRequestUserInputResult,
} from "../../generated/ask-v1.0.js";
import { counted, firstAnswer, InteractionError, type PermissionVote, type ReverseRequester } from "../bridge/interactions/index.js";
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
 * tau-answer, or another client or the deadline decides): nothing is ever decided for it.
 */
export class McpElicitations implements ReverseRequester {
  constructor(
    private readonly core: BridgeCore,
    private readonly watches: SessionWatches,
    private readonly log?: Log,
  ) {}

  requestPermission(sessionId: string, params: InteractionRequestPermissionParams, signal: AbortSignal, vote?: PermissionVote): Promise<InteractionRequestPermissionResult | undefined> {
    const form = permissionForm(params);
    return firstAnswer(
      this.watches.askable(sessionId).map((client) =>
        this.ask(client, sessionId, form, signal).then((answer): Promise<InteractionRequestPermissionResult | undefined> | undefined => {
          if (answer === undefined) return undefined;
          const choice = formChoice(answer);
          // Each client's answer is counted as it comes: one that was a vote leaves the others asked.
          if (choice.kind === "approve") return counted({ decision: choice.scope === "session" ? "acceptForSession" : "approve" }, client.peer.principal, vote);
          return counted({ decision: "deny", feedback: choice.kind === "reject" ? choice.feedback : "no decision was chosen" }, client.peer.principal, vote);
        }),
      ),
    );
  }

  requestUserInput(sessionId: string, params: InteractionRequestUserInputParams, signal: AbortSignal): Promise<InteractionRequestUserInputResult | undefined> {
    const form = questionForm(params);
    return firstAnswer(
      this.watches.askable(sessionId).map((client) =>
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
