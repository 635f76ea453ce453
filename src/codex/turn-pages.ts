import type { Turn, TurnItemsView } from "../../generated/codex-v2.js";
import { parseBoundedJson } from "../shared/json-bounds.js";
import { invalidParams } from "./codex-errors.js";

/**
 * thread/turns/list's paging over a thread's turns. A cursor names a turn by its id (Tau's, stable
 * between reads) and whether a page starts after it (nextCursor: continue past the page's last
 * turn) or at it (backwardsCursor: read the other way from the page's first turn, which it
 * includes again, so a client catches updates to it). Direction comes from each request's
 * sortDirection, so one cursor serves both ways. Cursors are opaque to clients (base64url JSON).
 */

export interface TurnPageRequest {
  cursor?: string | null;
  limit?: number | null;
  sortDirection?: "asc" | "desc" | null;
  itemsView?: TurnItemsView | null;
}

export interface TurnPage {
  data: Turn[];
  nextCursor: string | null;
  backwardsCursor: string | null;
}

type Anchor = { after: string } | { from: string };

/** One page of `turns` (oldest first, as the history has them), newest first unless sortDirection is asc. */
export function turnPage(turns: readonly Turn[], request: TurnPageRequest): TurnPage {
  const ordered = request.sortDirection === "asc" ? [...turns] : [...turns].reverse();
  const start = request.cursor ? startOf(ordered, decode(request.cursor)) : 0;
  // A page of none would never move on: limit 0 reads as 1; no limit, the rest of the turns.
  const limit = request.limit == null ? ordered.length : Math.max(request.limit, 1);
  const page = ordered.slice(start, start + limit);
  const more = start + limit < ordered.length && page.length > 0;
  return {
    data: page.map((turn) => withItemsView(turn, request.itemsView)),
    nextCursor: more ? encode({ after: page[page.length - 1]!.id }) : null,
    backwardsCursor: page.length > 0 ? encode({ from: page[0]!.id }) : null,
  };
}

/**
 * The items asked for: notLoaded none, full every one, and summary (the default, as in Codex) what
 * Codex's summary view keeps of a turn: its first user message and its last agent message.
 */
function withItemsView(turn: Turn, view: TurnItemsView | null | undefined): Turn {
  if (view === "notLoaded") return { ...turn, items: [], itemsView: "notLoaded" };
  if (view === "full") return { ...turn, itemsView: "full" };
  const user = turn.items.find((item) => item.type === "userMessage");
  const reply = [...turn.items].reverse().find((item) => item.type === "agentMessage");
  return { ...turn, items: [user, reply].filter((item) => item !== undefined), itemsView: "summary" };
}

function startOf(ordered: readonly Turn[], anchor: Anchor): number {
  const id = "after" in anchor ? anchor.after : anchor.from;
  const index = ordered.findIndex((turn) => turn.id === id);
  if (index < 0) throw notACursor();
  return "after" in anchor ? index + 1 : index;
}

const encode = (anchor: Anchor): string => Buffer.from(JSON.stringify(anchor)).toString("base64url");

function decode(cursor: string): Anchor {
  let value: unknown;
  try {
    value = parseBoundedJson(Buffer.from(cursor, "base64url").toString("utf8"));
  } catch {
    throw notACursor();
  }
  if (typeof value === "object" && value !== null && !Array.isArray(value)) {
    const { after, from } = value as Record<string, unknown>;
    if (typeof after === "string" && from === undefined) return { after };
    if (typeof from === "string" && after === undefined) return { from };
  }
  throw notACursor();
}

const notACursor = () => invalidParams("cursor", "not a cursor thread/turns/list returned for this thread");
