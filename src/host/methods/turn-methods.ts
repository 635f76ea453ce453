import type { SessionCancelPendingMessagesParams, SessionCancelPendingMessagesResult, SessionInterruptParams, SessionInterruptResult, SessionQueueParams, SessionRecordParams, SessionRecordResult, SessionRetryParams, SessionSteerParams, SessionSubmitParams, TurnResult, UserTurnResult } from "../../../generated/tau-v18.js";
import type { RequestContext } from "../host-context.js";
import { recordUserMessage } from "../session-mutations.js";

/** Spec §4.2: user input and turns. Turn requests answer when their turn settles. */
export const turnMethods = {
  "session.record"(ctx: RequestContext, params: SessionRecordParams): Promise<SessionRecordResult> {
    return recordUserMessage(ctx.session(params.sessionId), params.text, params.historyEntryId);
  },

  "session.submit"(ctx: RequestContext, params: SessionSubmitParams): Promise<UserTurnResult> {
    return ctx.session(params.sessionId).submit(params.text, params.historyEntryId);
  },

  "session.queue"(ctx: RequestContext, params: SessionQueueParams): Promise<UserTurnResult> {
    return ctx.session(params.sessionId).queue(params.text, params.historyEntryId);
  },

  "session.steer"(ctx: RequestContext, params: SessionSteerParams): Promise<UserTurnResult> {
    return ctx.session(params.sessionId).steer(params.text);
  },

  "session.cancelPendingMessages"(ctx: RequestContext, params: SessionCancelPendingMessagesParams): SessionCancelPendingMessagesResult {
    return ctx.session(params.sessionId).cancelPendingMessages();
  },

  "session.retry"(ctx: RequestContext, params: SessionRetryParams): Promise<TurnResult> {
    return ctx.session(params.sessionId).retry();
  },

  "session.interrupt"(ctx: RequestContext, params: SessionInterruptParams): SessionInterruptResult {
    return ctx.session(params.sessionId).interrupt();
  },
};
