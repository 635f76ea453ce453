import type { SessionRecord } from "../bridge/session-registry.js";
import { TauResponseError } from "../tau/upstream.js";
import type { McpMethodContext } from "./context.js";
import { ToolFailure } from "./errors.js";

/**
 * The session a caller names, observed through the bridge core; undefined when it does not exist
 * for the caller: unknown, another tenant's, or closed with Ask's session/close — the same answer
 * for all three, so it never tells them apart.
 */
export async function findSession({ services, client }: McpMethodContext, sessionId: string): Promise<SessionRecord | undefined> {
  const { sessions } = services.core;
  if (sessions.isClosed(sessionId)) return undefined;
  let record: SessionRecord;
  try {
    record = await sessions.open(sessionId);
  } catch (err) {
    if (err instanceof TauResponseError && err.code === "not_found") return undefined;
    throw err;
  }
  if (record.tenant !== client.peer.tenant || sessions.isClosed(sessionId)) return undefined;
  return record;
}

/** The session a tool names, or the tool's failure saying it does not exist. */
export async function toolSession(ctx: McpMethodContext, sessionId: string): Promise<SessionRecord> {
  const record = await findSession(ctx, sessionId);
  if (!record) throw new ToolFailure(`no session ${JSON.stringify(sessionId)}: see tau-sessions for the sessions you can use`);
  return record;
}

export interface SessionSummary {
  sessionId: string;
  cwd: string;
  at: number;
  running: boolean;
}

/** The caller's sessions on the Tau hosts, most recently active first (optionally only those rooted at cwd). */
export async function tenantSessions({ services, client }: McpMethodContext, cwd?: string): Promise<SessionSummary[]> {
  const { core } = services;
  const { sessions } = await core.hosts.request("session.list", {});
  const closed = await core.sessions.closedAmong(sessions.map((s) => s.sessionId));
  const found: SessionSummary[] = [];
  for (const { sessionId } of sessions) {
    if (closed.has(sessionId)) continue;
    const listed = await services.listed.digest(sessionId);
    if (!listed || listed.tenant !== client.peer.tenant) continue;
    if (cwd !== undefined && listed.cwd !== cwd) continue;
    found.push({ sessionId, cwd: listed.cwd, at: listed.at, running: core.sessions.get(sessionId)?.hub.running ?? false });
  }
  return found.sort((a, b) => b.at - a.at);
}
