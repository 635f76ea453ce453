import type {
  Thread,
  ThreadListParams,
  ThreadListResult,
  ThreadLoadedListParams,
  ThreadLoadedListResult,
  ThreadReadParams,
  ThreadReadResult,
  ThreadResumeParams,
  ThreadResumeResult,
  ThreadStartParams,
  ThreadStartResult,
  ThreadTurnsListParams,
  ThreadTurnsListResult,
} from "../../../generated/codex-v2.js";
import { askJoiningClient } from "../../bridge/interactions/index.js";
import { createAttributes } from "../../bridge/session-attributes.js";
import { approvalModeOf, DEFAULT_APPROVAL_POLICY, requestedPolicy } from "../approval-policy.js";
import { invalidParams } from "../codex-errors.js";
import type { CodexMethodContext } from "../context.js";
import { DynamicTools, dynamicFunctions } from "../dynamic-tools.js";
import { hostCatalogSnapshot } from "../host-catalog.js";
import { CodexServerRequests } from "../server-requests.js";
import type { CodexThread } from "../thread.js";
import { turnPage } from "../turn-pages.js";

/**
 * thread/*: a thread is a Tau session. thread/start creates one (in the client's cwd, with the
 * persona the client's `model` names, if it names one), thread/resume and thread/read load one the
 * tenant may see — from any connection, after a gateway restart too — with its history read from
 * the Tau snapshot. Loading a thread on a connection makes its notifications go there.
 */

export async function threadStart(ctx: CodexMethodContext, params: ThreadStartParams): Promise<ThreadStartResult> {
  const { services, peer } = ctx;
  const experimental = peer.client.experimentalApi;
  const policy = requestedPolicy(params.approvalPolicy, experimental) ?? DEFAULT_APPROVAL_POLICY;
  const functions = dynamicFunctions(params.dynamicTools ?? [], services.core.commandTools.map((t) => t.name));
  // Within the workspace roots of the client's tenant, as an Ask session/create is.
  const placed = services.workspaces.place(params.cwd, peer.tenant);
  if (!placed.ok) throw invalidParams("cwd", placed.reason);
  const cwd = placed.path;
  const personaId = await personaNamed(ctx, params.model);
  const { sessionId } = await services.core.upstream.request("session.create", {
    executionEnvironment: { kind: "local", cwd },
    attributes: createAttributes(peer.tenant, approvalModeOf(policy)),
    ...(personaId ? { personaId } : {}),
  });
  const thread = await services.threads.open(sessionId, peer.tenant);
  thread.createdWith(policy);
  thread.attach(peer, ctx.cause);
  if (functions.length > 0) {
    thread.useDynamicTools(await DynamicTools.open(peer, thread, functions, services.toolConnection, services.log));
  }
  const started = thread.thread(false, { type: "idle" });
  peer.notify("thread/started", { thread: started }, ctx.cause);
  return { thread: started, ...thread.settings() };
}

export async function threadResume(ctx: CodexMethodContext, params: ThreadResumeParams): Promise<ThreadResumeResult> {
  const { services, peer } = ctx;
  const child = await services.threads.openChild(params.threadId, peer.tenant);
  if (child) {
    // A sub-agent's thread: its run's notifications follow the response; it runs as its parent does, in its own directory.
    child.parent.subagents.attachChild(child.agentId, peer, ctx.cause);
    const thread = child.parent.childThread(child.agentId, params.excludeTurns !== true)!;
    return { thread, ...child.parent.settings(), cwd: thread.cwd };
  }
  const thread = await services.threads.open(params.threadId, peer.tenant);
  const policy = requestedPolicy(params.approvalPolicy, peer.client.experimentalApi);
  if (policy !== undefined) await thread.setApprovalPolicy(policy);
  // Otherwise it reports the session's mode, as it stands on every replica.
  else await thread.record.interactions.refreshSettings();
  // The thread's live notifications, which loading it brings, follow the response.
  const joining = !thread.isLoadedBy(peer);
  thread.attach(peer, ctx.cause);
  // Approvals, questions and plans pending now were put to the clients there were: this one is asked at once.
  if (joining) {
    askJoiningClient(thread.record, new CodexServerRequests(() => thread, (p) => p === peer), services.log);
    thread.askJoiningAboutPlans(peer);
  }
  return { thread: thread.thread(params.excludeTurns !== true), ...thread.settings() };
}

export async function threadRead({ services, peer }: CodexMethodContext, params: ThreadReadParams): Promise<ThreadReadResult> {
  const child = await services.threads.openChild(params.threadId, peer.tenant);
  if (child) return { thread: child.parent.childThread(child.agentId, params.includeTurns === true)! };
  const thread = await services.threads.open(params.threadId, peer.tenant);
  return { thread: thread.thread(params.includeTurns === true) };
}

/** A page of the thread's turns, from the history thread/read gives (turn-pages.ts has the paging). */
export async function threadTurnsList({ services, peer }: CodexMethodContext, params: ThreadTurnsListParams): Promise<ThreadTurnsListResult> {
  const thread = await services.threads.open(params.threadId, peer.tenant);
  return turnPage(thread.thread(true).turns, params);
}

/** The tenant's threads, most recently updated first; `cursor` is the offset the previous page ended at. */
export async function threadList({ services, peer }: CodexMethodContext, params: ThreadListParams): Promise<ThreadListResult> {
  const offset = params.cursor ? Number(params.cursor) : 0;
  if (!Number.isSafeInteger(offset) || offset < 0) throw invalidParams("cursor", "not a cursor this server returned");
  const { sessions } = await services.core.upstream.request("session.list", {});
  // Closed with Ask's session/close: every dialect finds them gone.
  const closed = await services.core.sessions.closedAmong(sessions.map((s) => s.sessionId));
  const cwds = cwdFilter(params.cwd);
  const term = params.searchTerm?.toLowerCase();
  const kinds = params.sourceKinds ?? [];
  // Sub-agents' child threads are listed only when sub-agent kinds are asked for; only those, when nothing else is.
  const children = kinds.some((k) => CHILD_KINDS.has(k));
  const parents = kinds.length === 0 || !kinds.every((k) => SUB_AGENT_KINDS.has(k));
  const found: Array<{ thread: Thread; order: number }> = [];
  for (const { sessionId } of sessions) {
    if (closed.has(sessionId)) continue;
    const digest = await services.threadDigests.digest(sessionId);
    if (!digest || digest.tenant !== peer.tenant) continue;
    const loaded = services.threads.get(sessionId);
    const thread = loaded ? loaded.thread(false) : digest.thread;
    const candidates = [...(parents ? [{ thread, order: digest.updatedAtMs }] : []), ...(children ? digest.children.map((c) => ({ thread: c, order: c.updatedAt * 1000 })) : [])];
    for (const candidate of candidates) {
      if (cwds && !cwds.includes(candidate.thread.cwd)) continue;
      if (term && !candidate.thread.preview.toLowerCase().includes(term)) continue;
      found.push(candidate);
    }
  }
  found.sort((a, b) => b.order - a.order);
  const limit = params.limit ?? 50;
  const page = found.slice(offset, offset + limit).map((f) => f.thread);
  return { data: page, nextCursor: offset + limit < found.length ? String(offset + limit) : null };
}

export async function threadLoadedList({ services, peer }: CodexMethodContext, params: ThreadLoadedListParams): Promise<ThreadLoadedListResult> {
  const ids = services.threads.loadedBy(peer).map((t: CodexThread) => t.threadId);
  const offset = params.cursor ? Number(params.cursor) : 0;
  if (!Number.isSafeInteger(offset) || offset < 0) throw invalidParams("cursor", "not a cursor this server returned");
  const limit = params.limit ?? ids.length;
  return { data: ids.slice(offset, offset + limit), nextCursor: offset + limit < ids.length ? String(offset + limit) : null };
}

/** The persona a client's `model` names; any other model name leaves the host's default (the response reports the one used). */
async function personaNamed({ services }: CodexMethodContext, model: string | null | undefined): Promise<string | undefined> {
  if (!model) return undefined;
  const snapshot = await hostCatalogSnapshot(services.core);
  return snapshot?.catalog.personas.some((p) => p.id === model) ? model : undefined;
}

/** The source kinds a Tau sub-agent's thread (a thread_spawn sub-agent) is of. */
const CHILD_KINDS: ReadonlySet<string> = new Set(["subAgent", "subAgentThreadSpawn"]);
/** Every sub-agent kind (the others — review, compact, other — Tau has no threads of). */
const SUB_AGENT_KINDS: ReadonlySet<string> = new Set(["subAgent", "subAgentReview", "subAgentCompact", "subAgentThreadSpawn", "subAgentOther"]);

function cwdFilter(value: unknown): string[] | undefined {
  if (typeof value === "string") return [value];
  if (Array.isArray(value) && value.every((v) => typeof v === "string")) return value as string[];
  return undefined;
}
