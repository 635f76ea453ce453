declare const requestCause: unique symbol;

/**
 * A client's request as the cause of what the gateway writes because of it (the MCP TypeScript
 * SDK's `relatedRequestId`): a method gets its request's cause, and passes it along with a
 * notification or a request to the client that its request brought about. The connection then
 * writes that message relative to the request's response, as the dialect's outbound policy says
 * (src/transports/outbound-policy.ts). Opaque: only the connection that handed it out reads it.
 */
export interface RequestCause {
  readonly [requestCause]: true;
}
