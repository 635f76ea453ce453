import type { UserInputInteraction } from "../../../generated/ask-v1.0.js";
import { draft } from "../event-draft.js";
import { errorText } from "./error-text.js";
import type { GatewayTool, ToolContext } from "./gateway-tool.js";
import { InteractionError } from "./interaction-error.js";
import type { InteractionKind, Pending } from "./pending-interactions.js";
import type { ToolCall } from "./tool-call.js";
import { errorReply, textReply } from "./tool-reply.js";
import { ASK_USER_TOOL } from "./tool-names.js";

/**
 * `ask_user {question, options?}` (DESIGN §4.4): the model asks the user. The call becomes a
 * user-input interaction (`input.requested`), answered by interaction/respond or by an
 * interaction/requestUserInput reverse request; the tool result is the answer text.
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

export class AskUserTool implements GatewayTool {
  readonly parameters = ASK_USER_PARAMETERS;

  constructor(private readonly context: ToolContext) {}

  start(call: ToolCall, args: unknown): void {
    const { question, options } = args as { question: string; options?: string[] };
    const { pending, reverse, sessionId, log } = this.context;
    const input = pending.open(USER_INPUT, call, { prompt: question, ...(options ? { options } : {}) });
    if (!pending.isPending(input)) return; // settled by a listener of the event
    reverse.requestUserInput(sessionId, { requestId: input.id, ...input.data, sessionId, interactionId: input.id }, input.asking).then(
      (answer) => {
        if (answer !== undefined) this.answer(input, answer.response);
      },
      (error: unknown) => {
        // No answer is not an answer: keep waiting for interaction/respond or the deadline.
        if (pending.isPending(input)) log?.("warn", "user-input request failed", { sessionId, interactionId: input.id, error: errorText(error) });
      },
    );
  }

  /** interaction/respond. */
  respond(interactionId: string, response: string): void {
    const input = this.context.pending.find(USER_INPUT, interactionId);
    if (!input) throw new InteractionError("interaction_not_found", `no pending user-input request ${interactionId}`);
    this.answer(input, response);
  }

  /** The question goes unanswered: the tool fails with the reason, so the model carries on without it. */
  decline(interactionId: string, reason: string): void {
    const input = this.context.pending.find(USER_INPUT, interactionId);
    if (!input) throw new InteractionError("interaction_not_found", `no pending user-input request ${interactionId}`);
    this.context.pending.resolve(input, {
      event: draft("input.resolved", { id: input.id, status: "cancelled", reason }),
      reply: errorReply(`the user did not answer: ${reason}`),
    });
  }

  /** The answer is the tool result; a later one changes nothing. */
  private answer(input: Pending<Question>, response: string): void {
    this.context.pending.resolve(input, {
      event: draft("input.resolved", { id: input.id, status: "responded", response }),
      reply: textReply(response),
    });
  }
}
