import type { MessageFrames } from "../model.js";
import { literal, obj, opt, ref, type Schema } from "../schema.js";
import { ACP_ERROR_CODES } from "./errors.js";

/**
 * JSON-RPC 2.0 as ACP speaks it (protocol §1): `"jsonrpc":"2.0"` is required on every message,
 * ids are null, integers or strings, and each direction numbers its own requests. Responses travel
 * opposite to the requests they answer, so both directions' unions include them.
 */

/** JSON-RPC 2.0 (§5): a response carries `result` or `error`, never both; the other one is absent. */
const ABSENT = opt(false);

/** The official codes first, then any other integer (the gateway's own codes among them). */
const OFFICIAL_CODES = ["parse_error", "invalid_request", "method_not_found", "invalid_params", "internal_error", "request_cancelled", "auth_required", "resource_not_found"] as const;

export const jsonRpcDefinitions: Record<string, Schema> = {
  JsonRpcVersion: literal("2.0"),
  RequestId: { anyOf: [{ type: "null" }, { type: "integer" }, { type: "string" }] },
  Error: { type: "object", properties: { code: ref("ErrorCode"), message: { type: "string" }, data: {} }, required: ["code", "message"] },
  ErrorCode: { anyOf: [...OFFICIAL_CODES.map((name) => ({ type: "integer", const: ACP_ERROR_CODES[name] })), { type: "integer" }] },
  SuccessResponse: obj({ jsonrpc: ref("JsonRpcVersion"), id: ref("RequestId"), result: {}, error: ABSENT }, { description: "Any success response, before the request it answers is known." }),
  ErrorResponse: obj({ jsonrpc: ref("JsonRpcVersion"), id: ref("RequestId"), error: ref("Error"), result: ABSENT }, { description: "An error response; id is null when the request's id could not be read." }),
};

/** Params may be omitted only when the method has no required params. */
function paramsRequired(params: Schema): boolean {
  return Array.isArray(params.required) && params.required.length > 0;
}

export const acpFrames: MessageFrames = {
  request: (entry, params) =>
    obj({
      jsonrpc: ref("JsonRpcVersion"),
      ...(entry.kind === "notification" ? {} : { id: ref("RequestId") }),
      method: literal(entry.name),
      params: "params" in entry && paramsRequired(entry.params) ? params : opt(params),
    }),
  response: (_entry, result) => obj({ jsonrpc: ref("JsonRpcVersion"), id: ref("RequestId"), result, error: ABSENT }),
  responseMessages: ["SuccessResponse", "ErrorResponse"],
};
