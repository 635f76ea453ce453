import type { SessionClientToolAckParams, SessionClientToolAckResult, SessionClientToolResultParams, SessionClientToolResultResult } from "../../../generated/tau-v18.js";
import type { RequestContext } from "../host-context.js";

/** Spec §4.7 and §7: completion of client-tool calls this connection received. */
export const clientToolMethods = {
  "session.clientTool.ack"(ctx: RequestContext, params: SessionClientToolAckParams): SessionClientToolAckResult {
    ctx.session(params.sessionId);
    return ctx.host.broker.ack(ctx.connection.id, params);
  },

  "session.clientTool.result"(ctx: RequestContext, params: SessionClientToolResultParams): SessionClientToolResultResult {
    ctx.session(params.sessionId);
    return ctx.host.broker.result(ctx.connection.id, params);
  },
};
