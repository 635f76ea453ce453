import type { MessageFrames } from "./model.js";
import { any, anyOf, int, literal, nul, obj, opt, ref, str, type Schema } from "./schema.js";

/**
 * A member that must not be there. JSON-RPC 2.0 (§5) gives a response either `result` or `error`,
 * never both: each response shape names the other one absent, so a message carrying both fails as
 * a success and as an error alike (and generated types make the member `never`).
 */
const ABSENT = opt(false);

/**
 * JSON-RPC 2.0 as the gateway's JSON-RPC dialects speak it (Ask, Codex app-server): the
 * `"jsonrpc":"2.0"` member is optional (app-server peers omit it), ids are strings or numbers, a
 * request without an id is a notification, error objects carry `code` and `message` (and
 * optionally `data`). Extra members are tolerated everywhere, as the hosts and clients do.
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

/**
 * Requests, notifications and responses; responses travel in both directions, matched by id.
 * With `nullParams`, `"params": null` means no params (as Ask hosts read it), so it is allowed
 * wherever params may be left out.
 */
export const jsonRpcFrames = ({ nullParams }: { nullParams: boolean }): MessageFrames => ({
  request: (entry, params) => {
    const required = "params" in entry && paramsRequired(entry.params);
    const isNotification = entry.kind === "notification";
    return obj({
      jsonrpc: opt(ref("JsonRpcVersion")),
      ...(isNotification ? {} : { id: entry.kind === "request" ? opt(ref("RequestId")) : ref("RequestId") }),
      method: literal(entry.name),
      params: required ? params : opt(nullParams ? anyOf(params, nul()) : params),
    });
  },
  response: (_entry, result) => obj({ jsonrpc: opt(ref("JsonRpcVersion")), id: ref("RequestId"), result, error: ABSENT }),
  responseMessages: ["SuccessResponse", "ErrorResponse"],
});
