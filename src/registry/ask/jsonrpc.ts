import type { MessageFrames } from "../model.js";
import { any, anyOf, int, literal, nul, obj, opt, ref, str, type Schema } from "../schema.js";

/**
 * A member that must not be there. JSON-RPC 2.0 (§5) gives a response either `result` or `error`,
 * never both: each response shape names the other one absent, so a message carrying both fails as
 * a success and as an error alike (and generated types make the member `never`).
 */
const ABSENT = opt(false);

/**
 * JSON-RPC 2.0 as Ask-style hosts speak it (spec §1): the `"jsonrpc":"2.0"` member is optional
 * (app-server peers omit it), ids are strings or numbers, a request without an id is a
 * notification, error objects carry `code` and `message` (and optionally `data`). Extra members
 * are tolerated everywhere, as the hosts do.
 */
export const jsonRpcDefinitions: Record<string, Schema> = {
  JsonRpcVersion: literal("2.0"),
  RequestId: { anyOf: [str(), int({ min: -Number.MAX_SAFE_INTEGER })], description: "String or integer request id." },
  JsonRpcRequest: obj(
    {
      jsonrpc: opt(ref("JsonRpcVersion")),
      id: opt(ref("RequestId")),
      method: str(),
      params: opt({ type: ["object", "array", "null"] }),
    },
    { description: "Any request or notification before method-specific validation." },
  ),
  ErrorObject: obj({ code: int({ min: -Number.MAX_SAFE_INTEGER }), message: str(), data: opt(any()) }),
  SuccessResponse: obj({ jsonrpc: opt(ref("JsonRpcVersion")), id: ref("RequestId"), result: any(), error: ABSENT }),
  ErrorResponse: obj({
    jsonrpc: opt(ref("JsonRpcVersion")),
    id: { anyOf: [ref("RequestId"), nul()] },
    error: ref("ErrorObject"),
    result: ABSENT,
  }),
};

/** Params may be omitted only when the method has no required params. */
function paramsRequired(params: Schema): boolean {
  return Array.isArray(params.required) && params.required.length > 0;
}

export const askFrames: MessageFrames = {
  request: (entry, params) => {
    const required = "params" in entry && paramsRequired(entry.params);
    const isNotification = entry.kind === "notification";
    return obj({
      jsonrpc: opt(ref("JsonRpcVersion")),
      ...(isNotification ? {} : { id: entry.kind === "request" ? opt(ref("RequestId")) : ref("RequestId") }),
      method: literal(entry.name),
      // null params mean none (Ask hosts treat them as {}), so they do for a method without required params.
      params: required ? params : opt(anyOf(params, nul())),
    });
  },
  response: (_entry, result) => obj({ jsonrpc: opt(ref("JsonRpcVersion")), id: ref("RequestId"), result, error: ABSENT }),
  event: (entry, payload) => obj({ type: literal(entry.name), seq: int({ min: 1 }), payload }),
};
