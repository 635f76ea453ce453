/**
 * An HTTP error with a JSON-RPC error body, as the MCP SDK's Streamable HTTP transport answers its
 * own; `about`: the request's id when it is known, the error's data. A module of its own, without
 * the SDK: the route answers what its HTTP layer refuses before any session needs the SDK's
 * transport, which is loaded at the route's first request (mcp-http.ts).
 */
export function jsonRpcError(status: number, code: number, message: string, headers: Record<string, string> = {}, about: { id?: string | number; data?: unknown } = {}): Response {
  const error = about.data === undefined ? { code, message } : { code, message, data: about.data };
  return new Response(JSON.stringify({ jsonrpc: "2.0", error, id: about.id ?? null }), { status, headers: { "content-type": "application/json", ...headers } });
}
