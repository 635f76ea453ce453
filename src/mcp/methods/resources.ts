import type {
  ResourcesListResult,
  ResourcesReadParams,
  ResourcesReadResult,
  ResourcesSubscribeParams,
  ResourcesSubscribeResult,
  ResourcesTemplatesListResult,
  ResourcesUnsubscribeParams,
  ResourcesUnsubscribeResult,
} from "../../../generated/mcp-v2025-11-25.js";
import type { McpMethodContext } from "../context.js";
import { invalidParams, resourceNotFound } from "../errors.js";
import { findSession, tenantSessions } from "../session-access.js";
import { sessionOfUri, sessionUri } from "../../shared/session-references.js";
import { transcriptText } from "../transcript.js";

const MIME = "text/markdown";

/** Every listing fits one page: a cursor can only be one the gateway never gave. */
function noCursor(params: { cursor?: string }): void {
  if (params.cursor !== undefined) throw invalidParams("cursor", "unknown cursor: everything is listed in one page");
}

/** resources/list: the transcript of each of the caller's sessions, most recently active first. */
export async function listResources(ctx: McpMethodContext, params: { cursor?: string }): Promise<ResourcesListResult> {
  noCursor(params);
  const sessions = await tenantSessions(ctx);
  return {
    resources: sessions.map((s) => ({
      uri: sessionUri(s.sessionId),
      name: `session-${s.sessionId}`,
      title: `Tau session in ${s.cwd}`,
      description: `The conversation of Tau session ${s.sessionId}${s.running ? " (a turn is running)" : ""}, last active ${new Date(s.at).toISOString()}.`,
      mimeType: MIME,
    })),
  };
}

export async function listTemplates(_ctx: McpMethodContext, params: { cursor?: string }): Promise<ResourcesTemplatesListResult> {
  noCursor(params);
  return {
    resourceTemplates: [{ uriTemplate: "tau://session/{sessionId}", name: "session", title: "Tau session transcript", description: "The conversation of a Tau session by its id.", mimeType: MIME }],
  };
}

export async function readResource(ctx: McpMethodContext, params: ResourcesReadParams): Promise<ResourcesReadResult> {
  const record = await resourceSession(ctx, params.uri);
  const snapshot = record.hub.snapshot;
  const text = snapshot ? transcriptText(record.sessionId, snapshot) : `# Tau session ${record.sessionId}\n`;
  return { contents: [{ uri: params.uri, mimeType: MIME, text }] };
}

/** resources/subscribe: notifications/resources/updated each time the transcript changes, for as long as the connection lasts. */
export async function subscribe(ctx: McpMethodContext, params: ResourcesSubscribeParams): Promise<ResourcesSubscribeResult> {
  const record = await resourceSession(ctx, params.uri);
  ctx.services.watches.watch(ctx.client, record).subscribed = true;
  return {};
}

export async function unsubscribe(ctx: McpMethodContext, params: ResourcesUnsubscribeParams): Promise<ResourcesUnsubscribeResult> {
  const sessionId = sessionOfUri(params.uri);
  const watch = sessionId === undefined ? undefined : ctx.services.watches.get(ctx.client, sessionId);
  if (watch) watch.subscribed = false;
  return {};
}

async function resourceSession(ctx: McpMethodContext, uri: string) {
  const sessionId = sessionOfUri(uri);
  const record = sessionId === undefined ? undefined : await findSession(ctx, sessionId);
  if (!record) throw resourceNotFound(uri);
  return record;
}
