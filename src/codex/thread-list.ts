import type { Thread, ThreadListParams, ThreadListResult, ThreadSortKey } from "../../generated/codex-v2.js";
import { codexError, invalidParams } from "./codex-errors.js";
import { parentThreadOf, sourceMatches } from "./thread-sources.js";

/**
 * thread/list's filters, order and pages over the threads a tenant may see, each option as the
 * real app-server (0.171.0) applies it. What the gateway has no counterpart for is applied
 * truthfully rather than ignored: no thread is archived, in a section or in a project, so asking
 * for those finds none; `originators` (hosted backends only) is refused, as Codex refuses it.
 *
 * A cursor is the position of a thread in the list's order (the sort key's value and the thread
 * id, base64url JSON), so threads created meanwhile never shift later pages. `nextCursor`
 * continues after the page's last thread; `backwardsCursor`, passed with the opposite
 * `sortDirection`, starts again at the page's first.
 */

/** One thread as the list sees it. */
export interface ListedThread {
  readonly thread: Thread;
  /** Epoch milliseconds. */
  readonly createdAtMs: number;
  /** Epoch milliseconds of the last message. */
  readonly updatedAtMs: number;
}

/** Page size without a limit (Codex: "a reasonable server-side value"). */
export const DEFAULT_THREAD_PAGE = 50;
/** At most this many ids in includedThreadIds and excludedThreadIds, as in Codex. */
export const MAX_LISTED_IDS = 100;

interface Position {
  /** The sort key it was made for. */
  k: ThreadSortKey;
  at: number;
  id: string;
  /** A backwardsCursor: the page starts at this thread, not after it. */
  from?: true;
}

/** Refuses what Codex refuses before it lists anything, in its words, naming the field. */
export function checkListParams(params: ThreadListParams): void {
  if (params.parentThreadId != null && params.ancestorThreadId != null) {
    throw codexError("invalid_request", "parentThreadId and ancestorThreadId are mutually exclusive");
  }
  if (params.attachedToThreadId != null && (params.parentThreadId != null || params.ancestorThreadId != null)) {
    throw codexError("invalid_request", "attachedToThreadId cannot be combined with parentThreadId or ancestorThreadId");
  }
  if (params.originators && params.originators.length > 0) {
    throw invalidParams("originators", "originator filtering is not supported by tau-gateway (only hosted backends filter on it)");
  }
  if (params.sortKey === "section_position" && params.sectionId == null) {
    throw codexError("invalid_request", "section-position sorting requires a section filter");
  }
  for (const field of ["includedThreadIds", "excludedThreadIds"] as const) {
    const ids = params[field];
    if (!ids) continue;
    if (ids.length > MAX_LISTED_IDS) throw invalidParams(field, `${field} accepts at most ${MAX_LISTED_IDS} entries`);
    const blank = ids.find((id) => !/\S/.test(id));
    if (blank !== undefined) throw invalidParams(field, `invalid thread id: ${JSON.stringify(blank)}`);
  }
  for (const field of ["parentThreadId", "ancestorThreadId", "attachedToThreadId"] as const) {
    const id = params[field];
    if (id != null && !/\S/.test(id)) throw invalidParams(field, `invalid thread id: ${JSON.stringify(id)}`);
  }
  if (params.projectId != null) throw invalidParams("projectId", `project not found: ${params.projectId}`);
  if (params.cursor != null) decodeCursor(params.cursor, sortKeyOf(params));
}

/** One page of `threads` (every thread of the tenant, any order), filtered and sorted as `params` (checked with checkListParams) ask. */
export function threadListPage(threads: readonly ListedThread[], params: ThreadListParams): ThreadListResult {
  const key = sortKeyOf(params);
  const direction = params.sortDirection === "asc" ? 1 : -1;
  const parents = new Map(threads.map((t) => [t.thread.id, parentThreadOf(t.thread.source)]));
  const kept = threads.filter((t) => matches(t.thread, params, parents));
  const value = (t: ListedThread) => valueOf(t, key);
  const order = (a: { at: number; id: string }, b: { at: number; id: string }) => direction * (a.at !== b.at ? a.at - b.at : a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
  const positioned = kept.map((t) => ({ listed: t, at: value(t), id: t.thread.id })).sort(order);

  let start = 0;
  if (params.cursor != null) {
    const anchor = decodeCursor(params.cursor, key);
    start = positioned.findIndex((p) => (anchor.from ? order(p, anchor) >= 0 : order(p, anchor) > 0));
    if (start < 0) start = positioned.length;
  }
  // A page of none would never move on: limit 0 reads as 1, as in Codex.
  const limit = params.limit == null ? DEFAULT_THREAD_PAGE : Math.max(params.limit, 1);
  const page = positioned.slice(start, start + limit);
  const first = page[0];
  const last = page.at(-1);
  return {
    data: page.map((p) => p.listed.thread),
    nextCursor: last && start + limit < positioned.length ? encodeCursor({ k: key, at: last.at, id: last.id }) : null,
    backwardsCursor: first ? encodeCursor({ k: key, at: first.at, id: first.id, from: true }) : null,
  };
}

function matches(thread: Thread, params: ThreadListParams, parents: ReadonlyMap<string, string | undefined>): boolean {
  // Nothing is archived (the gateway archives no thread), sectioned or attached to another thread.
  if (params.archived === true) return false;
  if (params.sectionId != null) return false;
  if (params.attachedToThreadId != null) return false;
  if (!sourceMatches(thread.source, params.sourceKinds)) return false;
  if (params.includedThreadIds && !params.includedThreadIds.includes(thread.id)) return false;
  if (params.excludedThreadIds?.includes(thread.id)) return false;
  if (params.modelProviders && params.modelProviders.length > 0 && !params.modelProviders.includes(thread.modelProvider)) return false;
  if (params.cwd != null && !(typeof params.cwd === "string" ? [params.cwd] : params.cwd).includes(thread.cwd)) return false;
  if (params.searchTerm && !(thread.name ?? thread.preview).includes(params.searchTerm)) return false;
  if (params.parentThreadId != null && parents.get(thread.id) !== params.parentThreadId) return false;
  if (params.ancestorThreadId != null && !descendsFrom(thread.id, params.ancestorThreadId, parents)) return false;
  return true;
}

/** Whether `ancestor` is among the threads that spawned `id`, at any depth (a cycle ends the walk). */
function descendsFrom(id: string, ancestor: string, parents: ReadonlyMap<string, string | undefined>): boolean {
  const seen = new Set([id]);
  for (let parent = parents.get(id); parent !== undefined && !seen.has(parent); parent = parents.get(parent)) {
    if (parent === ancestor) return true;
    seen.add(parent);
  }
  return false;
}

const sortKeyOf = (params: ThreadListParams): ThreadSortKey => params.sortKey ?? "created_at";

/** created_at by creation; updated_at and recency_at by the last message (the gateway knows no other recency); sections have no position. */
function valueOf(listed: ListedThread, key: ThreadSortKey): number {
  if (key === "created_at") return listed.createdAtMs;
  if (key === "section_position") return 0;
  return listed.updatedAtMs;
}

const encodeCursor = (position: Position): string => Buffer.from(JSON.stringify(position)).toString("base64url");

function decodeCursor(cursor: string, key: ThreadSortKey): Position {
  let value: unknown;
  try {
    value = JSON.parse(Buffer.from(cursor, "base64url").toString("utf8"));
  } catch {
    throw notACursor();
  }
  if (typeof value === "object" && value !== null && !Array.isArray(value)) {
    const { k, at, id, from } = value as Record<string, unknown>;
    if (k === key && typeof at === "number" && Number.isFinite(at) && typeof id === "string" && (from === undefined || from === true)) {
      return { k: key, at, id, ...(from ? { from } : {}) };
    }
  }
  throw notACursor();
}

const notACursor = () => invalidParams("cursor", "not a cursor thread/list returned for this sortKey");
