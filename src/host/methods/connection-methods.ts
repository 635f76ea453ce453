import type { InitializeParams, InitializeResult, SessionCreateParams, SessionCreateResult, SessionListResult, SessionObserveParams, SessionObserveResult, SessionSnapshotParams, SessionUnobserveParams, SessionUnobserveResult, Snapshot } from "../../../generated/tau-v18.js";
import type { RequestContext } from "../host-context.js";
import { sessionNotFound } from "../protocol-error.js";
import type { SessionStreamMessage } from "../session-state.js";

/** Spec §4.1: the handshake and finding, creating and observing sessions. */
export const connectionMethods = {
  initialize(ctx: RequestContext, params: InitializeParams): InitializeResult {
    const { connection, host } = ctx;
    const alreadyInitialized = connection.initialized;
    // Only the first initialize of a connection registers tools; a failed registration does not
    // count as that first initialize, so the client can correct its tool list and try again.
    if (!alreadyInitialized) {
      host.broker.register(connection.id, params.client.tools ?? []);
      connection.initialized = true;
    }
    return { protocolVersion: 18, methods: host.methods, alreadyInitialized };
  },

  async "session.create"(ctx: RequestContext, params: SessionCreateParams): Promise<SessionCreateResult> {
    const session = await ctx.host.sessions.create(params);
    ctx.session(session.id);
    return { sessionId: session.id };
  },

  "session.list"(ctx: RequestContext): SessionListResult {
    return { sessions: ctx.host.sessions.list().map((s) => ({ sessionId: s.id, lifecycle: s.snapshot.lifecycle })) };
  },

  "session.observe"(ctx: RequestContext, params: SessionObserveParams): SessionObserveResult {
    const session = ctx.session(params.sessionId);
    const release = ctx.connection.holdStream(session.id);
    const baselines: SessionObserveResult = {
      snapshot: session.snapshot,
      pendingUserMessages: session.pending.state(),
      subagentActivities: session.subagentActivities(),
    };
    ctx.afterResponse(() => release((message) => newerThan(message, baselines)));
    return baselines;
  },

  "session.unobserve"(ctx: RequestContext, params: SessionUnobserveParams): SessionUnobserveResult {
    const { connection, host } = ctx;
    if (!connection.isSubscribed(params.sessionId)) {
      // Tau answers a session this connection has no state for like an unknown one.
      throw sessionNotFound(params.sessionId);
    }
    connection.unsubscribe(params.sessionId);
    host.broker.detach(connection.id, params.sessionId);
    return { unobserved: true };
  },

  "session.snapshot"(ctx: RequestContext, params: SessionSnapshotParams): Snapshot {
    return ctx.session(params.sessionId).snapshot;
  },
};

/** After observe, only updates the returned baselines do not already contain are delivered. */
function newerThan(message: SessionStreamMessage, baselines: SessionObserveResult): boolean {
  switch (message.type) {
    case "session.delta":
      return message.toRevision > baselines.snapshot.revision;
    case "session.pendingUserMessages":
      return message.state.revision > baselines.pendingUserMessages.revision;
    case "session.subagentActivities":
      return message.revision > baselines.subagentActivities.revision;
    default:
      return true;
  }
}
