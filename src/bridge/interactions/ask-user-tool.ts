import type { UserInputInteraction } from "../../../generated/ask-v1.0.js";
import { draft } from "../event-draft.js";
import type { GatewayTool, ToolContext } from "./gateway-tool.js";
import { ASK_USER_TOOL } from "./tool-names.js";
import { InteractionError } from "./interaction-error.js";
import type { InteractionKind, Pending } from "./pending-interactions.js";
import { errorReply, textReply, type ToolCall } from "./tool-call.js";
import { errorText } from "../../shared/unknown-values.js";

/**
 * `ask_user {question, options?}` (DESIGN §4.4): the model asks the user. The call becomes a
 * user-input interaction (`input.requested`), answered by interaction/respond or through the
 * core's reverse requesters (each dialect's question); the tool result is the answer text. A
 * question declined (interaction/decline, or a client's `declined` outcome) fails the tool with
 * the reason, so the model carries on without it.
 */

/** At most this many suggested answers, as `input.requested` allows. */
export const MAX_ASK_USER_OPTIONS = 64;

export const ASK_USER_PARAMETERS = {
  type: "object",
  properties: {
    question: { type: "string", minLength: 1, description: "The question to put to the user." },
    options: {
      type: "array",
      items: { type: "string" },
      maxItems: MAX_ASK_USER_OPTIONS,
      description: "Suggested answers the user may pick from; they may also answer freely.",
    },
  },
  required: ["question"],
  additionalProperties: false,
} as const;

/** What the model is told about the tool. */
export const ASK_USER_DEFINITION = {
  name: ASK_USER_TOOL,
  description:
    "Ask the user a question and wait for the answer. Use it when you need a decision or information only the user has. The result is the user's answer.",
  parameters: ASK_USER_PARAMETERS,
};

type Question = UserInputInteraction["payload"];

const USER_INPUT: InteractionKind<Question> = {
  idKind: "user_input",
  created: (p) => draft("input.requested", { id: p.id, ...p.data }),
  ended: (p, status, reason) => draft("input.resolved", { id: p.id, status, reason }),
  expiredReply: (_p, _reason, waited) => errorReply(`the user did not answer within ${waited}`),
  record: (p) => ({ id: p.id, kind: "user_input", status: "pending", payload: p.data }),
};

/** What was decided about a question (plain JSON: it may be decided on another replica). */
type InputDecision = { action: "respond"; response: string } | { action: "decline"; reason: string };

export class AskUserTool implements GatewayTool {
  readonly parameters = ASK_USER_PARAMETERS;

  constructor(private readonly context: ToolContext) {
    context.pending.register(USER_INPUT, (input, decision) => this.carryOut(input, decision));
  }

  start(call: ToolCall, args: unknown): void {
    const { question, options } = args as { question: string; options?: string[] };
    const { pending, reverse, sessionId, log } = this.context;
    const input = pending.open(USER_INPUT, call, { prompt: question, ...(options ? { options } : {}) });
    if (!pending.isPending(input)) return; // settled by a listener of the event
    const params = { requestId: input.id, ...input.data, sessionId, interactionId: input.id };
    pending.whenAnnounced(input, () => reverse.requestUserInput(sessionId, params, input.asking)).then(
      (answer) => {
        if (answer === undefined) return;
        const decision: InputDecision = "declined" in answer ? { action: "decline", reason: answer.declined } : { action: "respond", response: answer.response };
        void pending.decide(input, decision);
      },
      (error: unknown) => {
        // No answer is not an answer: keep waiting for interaction/respond or the deadline.
        if (pending.isPending(input)) log?.("warn", "user-input request failed", { sessionId, interactionId: input.id, error: errorText(error) });
      },
    );
  }

  /** interaction/respond. */
  respond(interactionId: string, response: string): void {
    void this.context.pending.decide(this.pendingInput(interactionId), { action: "respond", response } satisfies InputDecision);
  }

  /** The question goes unanswered: the tool fails with the reason, so the model carries on without it. */
  decline(interactionId: string, reason: string): void {
    void this.context.pending.decide(this.pendingInput(interactionId), { action: "decline", reason } satisfies InputDecision);
  }

  private pendingInput(interactionId: string): Pending<Question> {
    const input = this.context.pending.find(USER_INPUT, interactionId);
    if (!input) throw new InteractionError("interaction_not_found", notPendingInput(interactionId));
    return input;
  }

  /** The decision that won: the answer is the tool result; anything else is the question going unanswered. */
  private carryOut(input: Pending<Question>, decision: unknown): void {
    const { action, response, reason } = (decision ?? {}) as Partial<Record<"action" | "response" | "reason", unknown>>;
    if (action === "respond" && typeof response === "string") {
      this.context.pending.resolve(input, {
        event: draft("input.resolved", { id: input.id, status: "responded", response }),
        reply: textReply(response),
      });
      return;
    }
    const why = typeof reason === "string" ? reason : "no usable answer";
    this.context.pending.resolve(input, {
      event: draft("input.resolved", { id: input.id, status: "cancelled", reason: why }),
      reply: errorReply(`the user did not answer: ${why}`),
    });
  }
}

/** The error for a user-input request that is not pending (never was, or already resolved). */
export const notPendingInput = (interactionId: string) => `no pending user-input request ${interactionId}`;
