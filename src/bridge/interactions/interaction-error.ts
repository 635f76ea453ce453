import type { AskErrorName } from "../../registry/ask/index.js";

/**
 * A client's interaction/* or plan/* request that cannot be honoured: the interaction is not
 * pending (-32006), there is no pending plan (-32007), or a parameter cannot be honoured (-32602).
 * The Ask surface maps `code` to the number in ASK_ERROR_CODES.
 */
export type InteractionErrorCode = Extract<AskErrorName, "interaction_not_found" | "plan_not_found" | "invalid_params">;

export class InteractionError extends Error {
  readonly code: InteractionErrorCode;

  constructor(code: InteractionErrorCode, message: string) {
    super(message);
    this.name = "InteractionError";
    this.code = code;
  }
}
