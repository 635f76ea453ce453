import type { SessionAutocompletePathsParams, SessionAutocompletePathsResult, SessionCompactParams, SessionCompactResult, SessionInterruptSubagentParams, SessionInterruptSubagentResult, SessionReloadParams, SessionReloadResult, SessionResolvePromptParams, SessionResolvePromptResult, SessionRewindParams, SessionRewindResult, SessionSetAutoCompactThresholdParams, SessionSetPersonaParams, SessionSetReasoningParams, SettingsUpdateResult, Snapshot } from "../../../generated/tau-v18.js";
import { promptBody } from "../catalog.js";
import type { RequestContext } from "../host-context.js";
import { completePaths } from "../path-completion.js";
import { requestFailed } from "../protocol-error.js";
import { compact, interruptSubagent, reload, rewind, setAutoCompactThreshold, setPersona, setReasoning } from "../session-mutations.js";

/** Spec §4.4–§4.6: settings, catalog content, maintenance and subagents. */
export const stateMethods = {
  "session.setReasoning"(ctx: RequestContext, params: SessionSetReasoningParams): Promise<SettingsUpdateResult> {
    return setReasoning(ctx.session(params.sessionId), params.reasoning);
  },

  "session.setAutoCompactThreshold"(ctx: RequestContext, params: SessionSetAutoCompactThresholdParams): Promise<SettingsUpdateResult> {
    return setAutoCompactThreshold(ctx.session(params.sessionId), params.thresholdTokens);
  },

  "session.setPersona"(ctx: RequestContext, params: SessionSetPersonaParams): Promise<Snapshot> {
    return setPersona(ctx.session(params.sessionId), params.personaId);
  },

  "session.resolvePrompt"(ctx: RequestContext, params: SessionResolvePromptParams): SessionResolvePromptResult {
    ctx.session(params.sessionId);
    const text = promptBody(params.promptId);
    if (text === undefined) throw requestFailed(`unknown prompt '${params.promptId}'`);
    return { promptId: params.promptId, text };
  },

  async "session.autocompletePaths"(ctx: RequestContext, params: SessionAutocompletePathsParams): Promise<SessionAutocompletePathsResult> {
    const session = ctx.session(params.sessionId);
    return { paths: await completePaths(session.cwd, params.query, params.limit) };
  },

  "session.reload"(ctx: RequestContext, params: SessionReloadParams): Promise<SessionReloadResult> {
    return reload(ctx.session(params.sessionId));
  },

  "session.compact"(ctx: RequestContext, params: SessionCompactParams): Promise<SessionCompactResult> {
    return compact(ctx.session(params.sessionId), params.mode, params.guidance);
  },

  "session.rewind"(ctx: RequestContext, params: SessionRewindParams): Promise<SessionRewindResult> {
    return rewind(ctx.session(params.sessionId), params.historyEntryId);
  },

  "session.interruptSubagent"(ctx: RequestContext, params: SessionInterruptSubagentParams): Promise<SessionInterruptSubagentResult> {
    return interruptSubagent(ctx.session(params.sessionId), params.subagentId);
  },
};
