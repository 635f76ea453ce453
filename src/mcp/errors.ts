import { fieldErrorOf, type FailureWords } from "../bridge/rpc-failures.js";
import { MCP_ERROR_CODES } from "../registry/mcp/index.js";
import { rpcErrors } from "../shared/rpc-error.js";

/** A JSON-RPC error the MCP surface answers with, by the name of one of the registry's MCP codes. */
export const mcpError = rpcErrors(MCP_ERROR_CODES);

export const invalidParams = fieldErrorOf(mcpError);

/** A resource the caller cannot read: unknown, or a session of another tenant, word for word the same. */
export const resourceNotFound = (uri: string) => mcpError("resource_not_found", `Resource not found: ${uri}`, { uri });

/**
 * A tool that could not do what it was asked (a session that does not exist for the caller, a busy
 * session, arguments that do not fit): the call's result says so with isError, as MCP wants tool
 * failures reported, so the model reads why and can correct itself.
 */
export class ToolFailure extends Error {
  override readonly name = "ToolFailure";
}

/** How MCP words what the session core and Tau refuse (outside a tool, where ToolFailure does). */
export const MCP_FAILURES: FailureWords<keyof typeof MCP_ERROR_CODES> = {
  error: mcpError,
  fromTau: {
    parse_error: "internal_error",
    invalid_request: "internal_error",
    method_not_found: "internal_error",
    invalid_params: "invalid_params",
    not_found: "resource_not_found",
    busy: "busy",
    internal_error: "internal_error",
  },
  fromSession: (error) => mcpError(error.code === "invalid_params" ? "invalid_params" : error.code === "forbidden" ? "forbidden" : "resource_not_found", error.message, error.data),
};
