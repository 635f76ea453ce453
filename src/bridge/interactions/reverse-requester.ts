import type {
  InteractionRequestPermissionParams,
  InteractionRequestPermissionResult,
  InteractionRequestUserInputParams,
  InteractionRequestUserInputResult,
} from "../../../generated/ask-v1.0.js";

/**
 * The way an interaction asks connected clients directly (app-server interop reverse requests).
 * The Ask surface implements it over its client connections; interactions only see answers.
 */
export interface ReverseRequester {
  /** Sends the reverse request to every subscribed connection of the session that opted in (initialize capabilities include "reverseRequests"); resolves with the first answer, or undefined if nobody can answer. */
  requestPermission(
    sessionId: string,
    params: InteractionRequestPermissionParams,
    signal: AbortSignal,
  ): Promise<InteractionRequestPermissionResult | undefined>;
  requestUserInput(
    sessionId: string,
    params: InteractionRequestUserInputParams,
    signal: AbortSignal,
  ): Promise<InteractionRequestUserInputResult | undefined>;
}
