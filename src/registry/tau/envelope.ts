import type { MessageFrames } from "../model.js";
import { any, literal, nonEmpty, nul, obj, opt, protocolVersion, ref, str, type Schema } from "../schema.js";

/**
 * Tau's versioned envelope (spec §2). Every message in both directions carries `version`; the
 * request id is a non-empty, non-blank string (numbers are not accepted); `params` is required.
 * Unknown top-level fields are stripped by the host, so envelopes are not strict.
 */

export const TAU_ERROR_CODES = [
  "parse_error",
  "invalid_request",
  "method_not_found",
  "invalid_params",
  "not_found",
  "busy",
  "cancelled",
  "internal_error",
] as const;

export const envelopeDefinitions: Record<string, Schema> = {
  RequestId: nonEmpty({ description: "Client-chosen request id: a non-empty string that is not whitespace only." }),
  RequestEnvelope: obj(
    {
      version: protocolVersion(),
      type: literal("request"),
      id: ref("RequestId"),
      method: str(),
      params: { type: "object" },
    },
    { description: "Any request before method-specific validation (the host's envelope checks)." },
  ),
  ErrorCode: { type: "string", enum: [...TAU_ERROR_CODES], description: "Branch on this, never on the message text." },
  ErrorObject: obj({
    code: ref("ErrorCode"),
    message: str(),
    data: opt(any("Diagnostic only; common shapes are {cause} and {sessionId}.")),
  }),
  SuccessResponse: obj(
    {
      version: protocolVersion(),
      type: literal("response"),
      id: ref("RequestId"),
      ok: literal(true),
      result: any("The result of the request with this id."),
    },
    { description: "A success response before it is matched to its request." },
  ),
  ErrorResponse: obj({
    version: protocolVersion(),
    type: literal("response"),
    id: { anyOf: [ref("RequestId"), nul()], description: "null when the request id could not be read." },
    ok: literal(false),
    error: ref("ErrorObject"),
  }),
};

export const tauFrames: MessageFrames = {
  request: (entry, params) =>
    obj({ version: protocolVersion(), type: literal("request"), id: ref("RequestId"), method: literal(entry.name), params }),
  response: (_entry, result) =>
    obj({ version: protocolVersion(), type: literal("response"), id: ref("RequestId"), ok: literal(true), result }),
};
