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
import { modeChangeAllowed } from "../../bridge/mode-changes.js";
import { createAttributes } from "../../bridge/session-attributes.js";
import { workingDirectoryRefused } from "../../bridge/session-workspace.js";
import { approvalModeOf, DEFAULT_APPROVAL_POLICY, requestedPolicy } from "../approval-policy.js";
import { codexError, invalidParams } from "../codex-errors.js";
import { AT_FIELD, resumeAfter } from "../relay-positions.js";
import type { CodexMethodContext } from "../context.js";
import { DynamicTools, dynamicFunctions } from "../dynamic-tools.js";
import { hostCatalogSnapshot } from "../host-catalog.js";
import { CodexServerRequests } from "../server-requests.js";
import type { CodexThread } from "../thread.js";
import { checkListParams, threadListPage, type ListedThread } from "../thread-list.js";
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
  const functions = await dynamicFunctions(params.dynamicTools ?? [], services.core.commandTools.map((t) => t.name));
  // Within the workspace roots of the client's tenant, as an Ask session/create is.
  const placed = services.workspaces.place(params.cwd, peer.tenant);
  if (!placed.ok) throw invalidParams("cwd", placed.reason);
  const cwd = placed.path;
  const personaId = await personaNamed(ctx, params.model);
  const { sessionId } = await services.core.hosts
    .request("session.create", {
      executionEnvironment: { kind: "local", cwd },
      attributes: createAttributes(peer.tenant, approvalModeOf(policy), { ephemeral: params.ephemeral === true }),
      ...(personaId ? { personaId } : {}),
    })
    .catch((err: unknown) => {
      // The persona is one the host listed; what it can refuse is the directory.
      const refused = workingDirectoryRefused(err, cwd);
      throw refused ? invalidParams("cwd", refused) : err;
    });
  await services.core.roles.created(sessionId, peer.principal);
  const thread = await services.threads.open(sessionId, peer.tenant);
  thread.createdWith(policy);
  thread.attach(peer, ctx.cause);
  if (functions.length > 0) {
    thread.useDynamicTools(await DynamicTools.open(peer, thread, functions, services.toolConnections, services.log));
  }
  const started = thread.thread(false, { type: "idle" });
  peer.notify("thread/started", { thread: started }, ctx.cause);
  return { thread: started, ...thread.settings(), ...placeFor(peer, thread) };
}

/** A relay's connection is told where in the log the thread is as it loads it (relay-positions.ts). */
const placeFor = (peer: CodexMethodContext["peer"], thread: CodexThread) => (peer.client.relayed ? { [AT_FIELD]: thread.placeNow() } : {});

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
  // Nothing of an ephemeral thread is kept to resume from, as Codex writes no rollout of one.
  if (thread.ephemeral) throw codexError("invalid_request", `no rollout found for thread id ${params.threadId}`);
  const policy = requestedPolicy(params.approvalPolicy, peer.client.experimentalApi);
  // An observer's policy is applied only as far as it restates the mode (mode-changes.ts).
  if (policy !== undefined && (await modeChangeAllowed(services.core.roles, thread.record.interactions, thread.threadId, peer.principal, approvalModeOf(policy), "thread/resume"))) {
    await thread.setApprovalPolicy(policy);
  }
  // Otherwise it reports the session's mode, as it stands on every replica.
  else await thread.record.interactions.refreshSettings();
  // The thread's live notifications, which loading it brings, follow the response.
  const joining = !thread.isLoadedBy(peer);
  thread.attach(peer, ctx.cause);
  // A relay's connection made again gets what it missed first, in the same go (relay-positions.ts).
  const after = peer.client.relayed ? resumeAfter(params) : undefined;
  if (after && !thread.resumeAfter(peer, after, ctx.cause)) services.log?.("warn", "a relay resumed a thread from a place no longer kept: what it missed is in the thread's turns only", { threadId: thread.threadId });
  // Approvals, questions and plans pending now were put to the clients there were: this one is asked at once.
  if (joining) askJoiningClient(thread.record, new CodexServerRequests(() => thread, services.core.roles, (p) => p === peer), services.log);
  return { thread: thread.thread(params.excludeTurns !== true), ...thread.settings(), ...placeFor(peer, thread) };
}

export async function threadRead({ services, peer }: CodexMethodContext, params: ThreadReadParams): Promise<ThreadReadResult> {
  const child = await services.threads.openChild(params.threadId, peer.tenant);
  if (child) return { thread: child.parent.childThread(child.agentId, params.includeTurns === true)! };
  const thread = await services.threads.open(params.threadId, peer.tenant);
  if (thread.ephemeral && params.includeTurns === true) throw codexError("invalid_request", "ephemeral threads do not support includeTurns");
  return { thread: thread.thread(params.includeTurns === true) };
}

/** A page of the thread's turns, from the history thread/read gives (turn-pages.ts has the paging). */
export async function threadTurnsList({ services, peer }: CodexMethodContext, params: ThreadTurnsListParams): Promise<ThreadTurnsListResult> {
  const thread = await services.threads.open(params.threadId, peer.tenant);
  if (thread.ephemeral) throw codexError("invalid_request", "ephemeral threads do not support thread/turns/list");
  return turnPage(thread.thread(true).turns, params);
}

/** The tenant's threads, a page at a time, filtered and ordered as asked (thread-list.ts has the rules). */
export async function threadList(ctx: CodexMethodContext, params: ThreadListParams): Promise<ThreadListResult> {
  const { services, peer } = ctx;
  checkListParams(params);
  const { sessions } = await services.core.hosts.request("session.list", {});
  // Closed with Ask's session/close: every dialect finds them gone.
  const closed = await services.core.sessions.closedAmong(sessions.map((s) => s.sessionId));
  const listed: ListedThread[] = [];
  for (const { sessionId, lifecycle } of sessions) {
    if (closed.has(sessionId)) continue;
    const digest = await services.threadDigests.digest(sessionId);
    // An ephemeral thread is listed to nobody, as Codex lists none.
    if (!digest || digest.tenant !== peer.tenant || digest.thread.ephemeral) continue;
    listed.push({ thread: await listedThread(ctx, sessionId, lifecycle === "running", digest.thread), createdAtMs: digest.createdAtMs, updatedAtMs: digest.updatedAtMs });
    // Its sub-agents' child threads, which sourceKinds (subAgent, subAgentThreadSpawn) asks for.
    for (const child of digest.children) listed.push({ thread: child, createdAtMs: child.createdAt * 1000, updatedAtMs: child.updatedAt * 1000 });
  }
  return threadListPage(listed, params);
}

/**
 * A listed thread with the status of whatever runs it: a thread a connection here has loaded, or
 * whose session runs a turn here (any dialect's), reports its own (active, with what it waits
 * on); a session the host runs for another gateway or replica is active; any other is notLoaded.
 */
async function listedThread({ services, peer }: CodexMethodContext, sessionId: string, hostRunning: boolean, digest: Thread): Promise<Thread> {
  const known = services.threads.get(sessionId);
  if (known) return known.thread(false);
  if (services.core.sessions.get(sessionId)?.hub.running) return (await services.threads.open(sessionId, peer.tenant)).thread(false);
  return hostRunning ? { ...digest, status: { type: "active", activeFlags: [] } } : digest;
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

