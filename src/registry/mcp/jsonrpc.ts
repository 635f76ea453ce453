import type { MessageFrames } from "../model.js";
import { int, literal, obj, opt, ref, str, type Schema } from "../schema.js";

/**
 * JSON-RPC 2.0 as MCP speaks it (basic protocol, "Messages"): `"jsonrpc":"2.0"` on every message,
 * request ids are strings or integers and never null, each side numbers its own requests, and an
 * error response names id null only when the request's id could not be read. Responses travel
 * opposite to the requests they answer, so both directions' unions include them.
 */

/** JSON-RPC 2.0 (§5): a response carries `result` or `error`, never both; the other one is absent. */
const ABSENT = opt(false);

/** The `_meta` member MCP reserves on params and results. */
export const META: Schema = { type: "object", additionalProperties: true };

export const jsonRpcDefinitions: Record<string, Schema> = {
  JsonRpcVersion: literal("2.0"),
  RequestId: { anyOf: [str(), int({ min: -Number.MAX_SAFE_INTEGER })], description: "A string or an integer; never null." },
  ProgressToken: { anyOf: [str(), int({ min: -Number.MAX_SAFE_INTEGER })], description: "Chosen by the requester in params._meta.progressToken." },
  RequestMeta: obj({ progressToken: opt(ref("ProgressToken")) }, { description: "params._meta of a request: a progress token asks for notifications/progress." }),
  ErrorObject: obj({ code: int({ min: -Number.MAX_SAFE_INTEGER }), message: str(), data: opt({}) }),
  SuccessResponse: obj({ jsonrpc: ref("JsonRpcVersion"), id: ref("RequestId"), result: { type: "object" }, error: ABSENT }, { description: "Any success response, before the request it answers is known." }),
  ErrorResponse: obj(
    { jsonrpc: ref("JsonRpcVersion"), id: { anyOf: [ref("RequestId"), { type: "null" }] }, error: ref("ErrorObject"), result: ABSENT },
    { description: "An error response; id is null when the request's id could not be read." },
  ),
};

/** Params may be omitted only when the method has no required params. */
function paramsRequired(params: Schema): boolean {
  return Array.isArray(params.required) && params.required.length > 0;
}

export const mcpFrames: MessageFrames = {
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
