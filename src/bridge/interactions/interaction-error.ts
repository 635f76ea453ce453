import { SessionError, type SessionErrorCode } from "../session-error.js";

/**
 * A client's interaction/* or plan/* request that cannot be honoured: the interaction is not
 * pending, there is no pending plan, or a parameter cannot be honoured. Each dialect maps it as
 * it maps every SessionError.
 */
export type InteractionErrorCode = Extract<SessionErrorCode, "interaction_not_found" | "plan_not_found" | "invalid_params">;

export class InteractionError extends SessionError {
  declare readonly code: InteractionErrorCode;

  constructor(code: InteractionErrorCode, message: string) {
    super(code, message);
    this.name = "InteractionError";
  }
}
