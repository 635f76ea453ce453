import type {
  SessionCloseParams,
  SessionCloseResult,
  SessionCreateParams,
  SessionCreateResult,
  SessionListParams,
  SessionListResult,
  SessionResumeParams,
  SessionResumeResult,
  SessionSummary,
} from "../../../generated/ask-v1.0.js";
import { invalidParams } from "../ask-errors.js";
import type { MethodContext } from "../context.js";
import { approvalModeFor } from "../../bridge/interactions/index.js";
import { createAttributes } from "../../bridge/session-attributes.js";
import { closeSession } from "../../bridge/session-close.js";
import { workingDirectoryRefused } from "../../bridge/session-workspace.js";
import { checkToolNames, notAppliedNotices } from "../session-create-request.js";
import { factsOf, modelName, type SessionFacts } from "../session-facts.js";
import { decodeListCursor, encodeListCursor, type ListPosition } from "../session-list-cursor.js";

/**
 * session/create. The working directory and the approval mode are the gateway's to honour (the
 * directory within the workspace roots); model, tools and system prompt are Tau's to choose, so a
 * value Tau does not take is reported in a notice event after session.created, never refused.
 */
export async function create({ services, peer }: MethodContext, params: SessionCreateParams): Promise<SessionCreateResult> {
  checkToolNames(params.tools, services.toolNames);
  const placed = services.workspaces.place(params.workspace?.workspacePath, peer.tenant);
  if (!placed.ok) throw invalidParams("workspace.workspacePath", placed.reason);
  const cwd = placed.path;
  const mode = approvalModeFor(params.mode);
  const { sessionId } = await services.upstream
    .request("session.create", {
      executionEnvironment: { kind: "local", cwd },
      attributes: createAttributes(peer.tenant, mode),
    })
    .catch((err: unknown) => {
      const refused = workingDirectoryRefused(err, cwd);
      throw refused ? invalidParams("workspace.workspacePath", refused) : err;
    });
  await services.core.roles.created(sessionId, peer.principal);
  const record = await services.sessions.open(sessionId);
  const snapshot = record.hub.snapshot!;
  for (const notice of notAppliedNotices(params, snapshot)) record.hub.emit(notice);
  return { session: { sessionId, model: modelName(snapshot), createdAt: isoTime(snapshot.createdAt) } };
}

/**
 * session/list: the tenant's sessions, newest first, a page at a time. The cursor is the position
 * (creation time, id) of the last session of the previous page, so a session created meanwhile
 * sorts before the first page and never shifts the pages after it.
 */
export async function list({ services, peer }: MethodContext, params: SessionListParams): Promise<SessionListResult> {
  const after = params.cursor === undefined ? undefined : decodeListCursor(params.cursor);
  if (after === null) throw invalidParams("cursor", "not a nextCursor from session/list");
  const { sessions } = await services.upstream.request("session.list", {});
  const closed = await services.sessions.closedAmong(sessions.map((s) => s.sessionId));
  const summaries: Array<SessionSummary & { position: ListPosition }> = [];
  for (const s of sessions) {
    if (closed.has(s.sessionId)) continue;
    const facts = await knownFacts(services, s.sessionId);
    if (!facts || facts.tenant !== peer.tenant || facts.ephemeral) continue;
    const position: ListPosition = { createdAt: facts.createdAt, sessionId: s.sessionId };
    if (after && !isAfter(position, after)) continue;
    const running = s.lifecycle === "running";
    summaries.push({ sessionId: s.sessionId, model: facts.model, createdAt: isoTime(facts.createdAt), running, idle: !running, position });
  }
  summaries.sort((a, b) => (isAfter(a.position, b.position) ? 1 : -1));
  const page = summaries.slice(0, params.limit ?? 20);
  const last = page.at(-1);
  return {
    sessions: page.map(({ position: _position, ...summary }) => summary),
    nextCursor: last && summaries.length > page.length ? encodeListCursor(last.position) : null,
  };
}

/** Newest first, ties broken by id (descending), so every session has one place in the order. */
function isAfter(a: ListPosition, b: ListPosition): boolean {
  return a.createdAt !== b.createdAt ? a.createdAt < b.createdAt : a.sessionId < b.sessionId;
}

export async function resume({ services, peer }: MethodContext, params: SessionResumeParams): Promise<SessionResumeResult> {
  const record = await services.sessions.access(params.sessionId, peer.tenant);
  const running = record.hub.running;
  return { sessionId: record.sessionId, running, idle: !running, createdAt: record.hub.createdAt ?? isoTime(record.hub.snapshot!.createdAt) };
}

export async function close({ services, peer }: MethodContext, params: SessionCloseParams): Promise<SessionCloseResult> {
  const record = await services.sessions.access(params.sessionId, peer.tenant);
  await services.core.roles.require(record.sessionId, peer.principal, "close", "session/close");
  await closeSession({ upstream: services.upstream, sessions: services.sessions, ended: (id) => services.subscriptions.dropSession(id) }, record);
  return { closed: true, sessionId: record.sessionId };
}

/** Immutable facts (tenant, createdAt, model) for list: from the hub when open, else read once and kept. */
function knownFacts(services: MethodContext["services"], sessionId: string): Promise<SessionFacts | undefined> {
  const snapshot = services.sessions.get(sessionId)?.hub.snapshot;
  return snapshot ? Promise.resolve(factsOf(snapshot)) : services.sessionFacts.read(sessionId);
}

export const isoTime = (epochMs: number) => new Date(epochMs).toISOString();
