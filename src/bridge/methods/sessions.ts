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
import type { Snapshot } from "../../../generated/tau-v18.js";
import { invalidParams, sessionNotFound } from "../ask-errors.js";
import type { MethodContext } from "../context.js";
import { approvalModeFor } from "../interactions/index.js";
import { createAttributes, sessionTenant } from "../session-attributes.js";

/** Tau picks the model, tools and system prompt through its persona; pretending otherwise would drop them silently. */
const UNSUPPORTED_CREATE_PARAMS = {
  model: "the Tau host selects the model through the session persona",
  tools: "the Tau host decides its tools; the gateway adds its own client tools",
  systemPrompt: "the Tau host builds the system prompt from the session persona",
} as const;

export async function create({ services, peer }: MethodContext, params: SessionCreateParams): Promise<SessionCreateResult> {
  for (const [field, why] of Object.entries(UNSUPPORTED_CREATE_PARAMS)) {
    if ((params as Record<string, unknown>)[field] !== undefined) throw invalidParams(field, `not supported: ${why}`);
  }
  const cwd = params.workspace?.workspacePath ?? services.defaultCwd;
  if (!cwd.startsWith("/")) throw invalidParams("workspace.workspacePath", "must be an absolute path");
  const mode = approvalModeFor(params.mode);
  const { sessionId } = await services.upstream.request("session.create", {
    executionEnvironment: { kind: "local", cwd },
    attributes: createAttributes(peer.tenant, mode),
  });
  const record = await services.sessions.open(sessionId);
  const snapshot = record.hub.snapshot!;
  return { session: { sessionId, model: modelName(snapshot), createdAt: isoTime(snapshot.createdAt) } };
}

export async function list({ services, peer }: MethodContext, params: SessionListParams): Promise<SessionListResult> {
  const { sessions } = await services.upstream.request("session.list", {});
  const summaries: Array<SessionSummary & { order: number }> = [];
  for (const s of sessions) {
    const snapshot = await services.core.knownSnapshot(s.sessionId);
    if (!snapshot || sessionTenant(snapshot) !== peer.tenant) continue;
    const running = s.lifecycle === "running";
    summaries.push({ sessionId: s.sessionId, model: modelName(snapshot), createdAt: isoTime(snapshot.createdAt), running, idle: !running, order: snapshot.createdAt });
  }
  summaries.sort((a, b) => b.order - a.order);
  return { sessions: summaries.slice(0, params.limit ?? 20).map(({ order: _order, ...summary }) => summary) };
}

export async function resume({ services, peer }: MethodContext, params: SessionResumeParams): Promise<SessionResumeResult> {
  const record = await services.sessions.access(params.sessionId, peer.tenant);
  if (record.closed) {
    // close let go of the session upstream: observe it again (catching up like a resync).
    await record.hub.attach();
    record.closed = false;
  }
  const running = record.hub.running;
  return { sessionId: record.sessionId, running, idle: !running, createdAt: record.hub.createdAt ?? isoTime(record.hub.snapshot!.createdAt) };
}

export async function close({ services, peer }: MethodContext, params: SessionCloseParams): Promise<SessionCloseResult> {
  const record = await services.sessions.access(params.sessionId, peer.tenant);
  if (record.closed) throw sessionNotFound(params.sessionId);
  record.interactions.cancelAll("session closed");
  // Emitting delivers synchronously to every subscriber, so session.ended reaches them before the
  // session is let go upstream (the Ask host bug this avoids: subscribers never saw it).
  record.hub.emit({ type: "session.ended", payload: { sessionId: record.sessionId, reason: "closed" } });
  record.closed = true;
  await record.hub.detach();
  return { closed: true, sessionId: record.sessionId };
}

export const isoTime = (epochMs: number) => new Date(epochMs).toISOString();
/** Ask hosts report the model without a provider prefix. */
export const modelName = (snapshot: Snapshot) => snapshot.bootstrap.model.id.replace(/^[^/]+\//, "");

