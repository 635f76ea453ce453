import type { SessionCreateParams } from "../../generated/ask-v1.0.js";
import type { Snapshot } from "../../generated/tau-v18.js";
import { ASK_TOOL_NAMES, SESSION_MODES } from "../registry/ask/index.js";
import { HOST_TOOL_NAMES } from "../registry/tau/index.js";
import { askError } from "./ask-errors.js";
import { draft, type EventDraft } from "../bridge/event-draft.js";
import { GATEWAY_TOOL_NAMES } from "../bridge/interactions/index.js";

/**
 * What session/create asks for beyond a working directory and an approval mode — a model, a tool
 * list, a system prompt — and what of it Tau can honour. Tau picks all three through the session's
 * persona, so the session starts with what Tau uses, the result reports the model really used, and
 * one `notice` event per value names what was not applied. A mode the gateway does not know falls
 * back to the default (as Ask hosts do), with a notice as well. Nothing is dropped silently.
 */

/** Every tool name session/create accepts: Ask's, Tau's own, the gateway's client tools and the configured command tools. */
export function knownToolNames(commandTools: ReadonlyArray<{ name: string }>): ReadonlySet<string> {
  return new Set([...ASK_TOOL_NAMES, ...HOST_TOOL_NAMES, ...GATEWAY_TOOL_NAMES, ...commandTools.map((tool) => tool.name)]);
}

/** -32602 `Unknown tool: X` (the Ask host's words) for the first name no one provides. */
export function checkToolNames(tools: readonly string[] | undefined, known: ReadonlySet<string>): void {
  const unknown = tools?.find((name) => !known.has(name));
  if (unknown !== undefined) throw askError("invalid_params", `Unknown tool: ${unknown}`, { field: "tools", tool: unknown });
}

/** Whether `requested` names the model the session runs (with or without a provider/ prefix). */
export function isSessionModel(requested: string, snapshot: Snapshot): boolean {
  const { id, provider } = snapshot.bootstrap.model;
  const bare = (model: string) => model.replace(/^[^/]+\//, "");
  return requested === id || requested === `${provider}/${id}` || bare(requested) === bare(id);
}

const notApplied = (field: string, title: string, content: string[]): EventDraft =>
  draft("notice", { severity: "warn", title, content, kind: `tau-gateway.session-create.${field}` });

/** The notices for what the session asked for and does not get, in params order. */
export function notAppliedNotices(params: SessionCreateParams, snapshot: Snapshot): EventDraft[] {
  const notices: EventDraft[] = [];
  const { id: modelId, provider } = snapshot.bootstrap.model;
  const persona = snapshot.settings.personaId;
  if (params.mode !== undefined && !(SESSION_MODES as readonly string[]).includes(params.mode)) {
    notices.push(
      notApplied("mode", `mode ${JSON.stringify(params.mode)} not applied`, [
        `Not a mode this gateway knows (${SESSION_MODES.join(", ")}); the session uses the default, on_request: the gateway's command tools ask for approval.`,
      ]),
    );
  }
  if (params.model !== undefined && !isSessionModel(params.model, snapshot)) {
    notices.push(
      notApplied("model", `model ${JSON.stringify(params.model)} not applied`, [
        `The Tau host runs this session on ${provider}/${modelId}: Tau chooses the model through the session persona (${persona}), not per request.`,
      ]),
    );
  }
  if (params.tools !== undefined) {
    const personaTools = snapshot.catalog.personas.find((p) => p.id === persona)?.tools;
    notices.push(
      notApplied("tools", "tools not applied", [
        `Requested: ${params.tools.length ? params.tools.join(", ") : "none"}.`,
        personaTools
          ? `The Tau host gives this session the tools of its persona (${persona}): ${personaTools.join(", ")}; the gateway adds its client tools (${GATEWAY_TOOL_NAMES.join(", ")} and any command tools).`
          : `The Tau host gives this session the tools of its persona (${persona}); the gateway adds its client tools (${GATEWAY_TOOL_NAMES.join(", ")} and any command tools).`,
      ]),
    );
  }
  if (params.systemPrompt !== undefined) {
    notices.push(
      notApplied("systemPrompt", "systemPrompt not applied", [
        `The Tau host builds the system prompt from the session persona (${persona}); it cannot be replaced per session.`,
      ]),
    );
  }
  return notices;
}
