import type { SessionRecord } from "../../bridge/session-registry.js";
import { isAbsolute } from "node:path";
import type {
  McpServer,
  SessionCloseParams,
  SessionCloseResult,
  SessionInfo,
  SessionListParams,
  SessionListResult,
  SessionLoadParams,
  SessionLoadResult,
  SessionNewParams,
  SessionNewResult,
  SessionResumeParams,
  SessionResumeResult,
  SessionSetModeParams,
  SessionSetModeResult,
  SessionUpdate,
} from "../../../generated/acp-v1.js";
import { modeChangeAllowed } from "../../bridge/mode-changes.js";
import { createAttributes } from "../../bridge/session-attributes.js";
import { workingDirectoryRefused } from "../../bridge/session-workspace.js";
import type { AcpMethodContext } from "../context.js";
import { invalidParams } from "../errors.js";
import { isModeId, ACP_MODE_IDS, modeState } from "../modes.js";
import { ownPrompts, placeNow, positionMeta, resumeAfter } from "../relay-positions.js";
import { accessSession, linkedSession } from "../session-access.js";
import { sessionPage, type ListedInfo } from "../session-pages.js";

/** How long session/close waits for the cancelled turn to end before interrupting it again. */
const CLOSE_GRACE_MS = 5_000;

/** session/new: a Tau session in a local environment rooted at cwd, in the mode that asks before running command tools. */
export async function newSession(ctx: AcpMethodContext, params: SessionNewParams): Promise<SessionNewResult> {
  checkDirectories(params.cwd, params.additionalDirectories);
  const { core, links, workspaces } = ctx.services;
  // Within the workspace roots of the client's tenant, as an Ask session/create is.
  const placed = workspaces.place(params.cwd, ctx.client.peer.tenant);
  if (!placed.ok) throw invalidParams("cwd", placed.reason);
  const { sessionId } = await core.hosts
    .request("session.create", {
      executionEnvironment: { kind: "local", cwd: placed.path },
      attributes: createAttributes(ctx.client.peer.tenant, "on_request"),
    })
    .catch((err: unknown) => {
      const refused = workingDirectoryRefused(err, placed.path);
      throw refused ? invalidParams("cwd", refused) : err;
    });
  await core.roles.created(sessionId, ctx.client.peer.principal);
  const record = await core.sessions.open(sessionId);
  const { link } = links.open(ctx.client, record);
  link.attach({ replay: false });
  // An editor knows the session only once this answer arrives: say what was not taken afterwards.
  if (params.mcpServers.length > 0) link.send(mcpServersNotTaken(params.mcpServers, ctx.client.takesNotices), ctx.cause);
  return { sessionId, modes: modeState(record.interactions.mode), ...placeFor(ctx, record) };
}

/** A relay's connection is told where in the log it takes the session up (relay-positions.ts). */
const placeFor = (ctx: AcpMethodContext, record: SessionRecord) => (ctx.client.relayed ? { _meta: positionMeta(placeNow(record.hub.log)) } : {});

/** session/load: the session's conversation as updates, then the answer; from then on its live updates. */
export async function loadSession(ctx: AcpMethodContext, params: SessionLoadParams): Promise<SessionLoadResult> {
  checkDirectories(params.cwd, params.additionalDirectories);
  const record = await accessSession(ctx, params.sessionId);
  const { link, created } = ctx.services.links.open(ctx.client, record);
  if (created) link.attach({ replay: true, cause: ctx.cause });
  else link.replay();
  if (params.mcpServers.length > 0) link.send(mcpServersNotTaken(params.mcpServers, ctx.client.takesNotices), ctx.cause);
  await record.interactions.refreshSettings();
  return { modes: modeState(record.interactions.mode), ...placeFor(ctx, record) };
}

/** session/resume: live updates from now on, without the history. */
export async function resumeSession(ctx: AcpMethodContext, params: SessionResumeParams): Promise<SessionResumeResult> {
  checkDirectories(params.cwd, params.additionalDirectories);
  const record = await accessSession(ctx, params.sessionId);
  const { link, created } = ctx.services.links.open(ctx.client, record);
  // A relay's connection made again resumes where the editor was (relay-positions.ts).
  if (created) link.attach({ replay: false, cause: ctx.cause, after: resumeAfter(params), ownPrompts: ownPrompts(params) });
  if (params.mcpServers?.length) link.send(mcpServersNotTaken(params.mcpServers, ctx.client.takesNotices), ctx.cause);
  await record.interactions.refreshSettings();
  return { modes: modeState(record.interactions.mode), ...placeFor(ctx, record) };
}

/**
 * session/close: cancels this connection's turn in the session and stops its updates; the Tau
 * session stays. Letting go is every connection's own, an observer's too (it ends nobody's work,
 * so it is not refused); cancelling its turn is an interrupt, which a principal made observer since
 * it prompted may not do: it lets go, and the turn runs on for the session's other clients.
 */
export async function closeSession(ctx: AcpMethodContext, params: SessionCloseParams): Promise<SessionCloseResult> {
  const link = linkedSession(ctx, params.sessionId, true);
  if (!(await ctx.services.core.roles.allows(link.sessionId, ctx.client.peer.principal, "interrupt"))) {
    await ctx.services.links.close(link);
    return {};
  }
  await link.cancelOwn();
  await ctx.services.links.close(link, CLOSE_GRACE_MS);
  return {};
}

/** session/set_mode: how the session's command tools are gated from now on, for every client of it. */
export async function setMode(ctx: AcpMethodContext, params: SessionSetModeParams): Promise<SessionSetModeResult> {
  const link = linkedSession(ctx, params.sessionId);
  if (!isModeId(params.modeId)) throw invalidParams("modeId", `unknown mode ${JSON.stringify(params.modeId)} (modes: ${ACP_MODE_IDS.join(", ")})`);
  // An observer's set_mode is refused unless it restates the mode in force (mode-changes.ts).
  if (!(await modeChangeAllowed(ctx.services.core.roles, link.record.interactions, link.sessionId, ctx.client.peer.principal, params.modeId, "session/set_mode"))) return {};
  // A change is told to every editor of the session (this one included) as current_mode_update, see SessionLinks.
  await link.record.interactions.setMode(params.modeId);
  return {};
}

/**
 * session/list: the tenant's sessions on the Tau host, most recently active first, optionally only
 * those rooted at cwd (an absolute path, as ACP requires), a page at a time (session-pages.ts).
 */
export async function listSessions(ctx: AcpMethodContext, params: SessionListParams): Promise<SessionListResult> {
  if (params.cwd != null && !isAbsolute(params.cwd)) throw invalidParams("cwd", "must be an absolute path");
  // A bad cursor is refused before anything is read.
  if (params.cursor != null) sessionPage([], params.cursor);
  const { core } = ctx.services;
  const { sessions } = await core.hosts.request("session.list", {});
  // Closed with Ask's session/close: every dialect finds them gone.
  const closed = await core.sessions.closedAmong(sessions.map((s) => s.sessionId));
  const found: ListedInfo[] = [];
  for (const { sessionId } of sessions) {
    if (closed.has(sessionId)) continue;
    const listed = await ctx.services.listed.digest(sessionId);
    if (!listed || listed.tenant !== ctx.client.peer.tenant || listed.ephemeral) continue;
    if (params.cwd != null && listed.cwd !== params.cwd) continue;
    found.push({ sessionId, cwd: listed.cwd, updatedAt: new Date(listed.at).toISOString(), at: listed.at });
  }
  return sessionPage(found, params.cursor);
}

function checkDirectories(cwd: string, additionalDirectories: string[] | undefined): void {
  if (!isAbsolute(cwd)) throw invalidParams("cwd", "must be an absolute path");
  if (additionalDirectories?.length) throw invalidParams("additionalDirectories", "not supported: a Tau session works in one directory");
}

/**
 * Tau runs its own tools and connects to no MCP server a client names: said once, as a notice where
 * the client takes them and as an agent message otherwise, rather than dropped in silence.
 */
function mcpServersNotTaken(servers: McpServer[], asNotice: boolean): SessionUpdate {
  const names = servers.map((s) => s.name).join(", ");
  const text = `MCP servers are not supported: Tau uses its own tools, so ${names} will not be connected.`;
  return asNotice
    ? { sessionUpdate: "notice", severity: "warning", title: "MCP servers not supported", description: text }
    : { sessionUpdate: "agent_message_chunk", content: { type: "text", text } };
}
