import type { SessionInfo } from "../../generated/acp-v1.js";
import { invalidParams } from "./errors.js";

/**
 * session/list's pages: the sessions most recently active first (ties by id), ACP_SESSION_PAGE at
 * a time. `nextCursor` is the place of the page's last session in that order (its last activity
 * and id, base64url JSON), so a session that becomes active meanwhile moves before the first page
 * rather than shifting the ones after it; it is absent on the last page, which ends paging (ACP).
 */

export const ACP_SESSION_PAGE = 50;

export interface ListedInfo extends SessionInfo {
  /** Last activity, epoch ms. */
  readonly at: number;
}

interface Place {
  at: number;
  id: string;
}

export function sessionPage(found: readonly ListedInfo[], cursor: string | null | undefined, pageSize = ACP_SESSION_PAGE): { sessions: SessionInfo[]; nextCursor?: string } {
  const before = (a: Place, b: Place) => (a.at !== b.at ? a.at > b.at : a.id > b.id);
  const ordered = found.map((info) => ({ info, place: { at: info.at, id: info.sessionId } })).sort((a, b) => (before(a.place, b.place) ? -1 : 1));
  const after = cursor == null ? undefined : decode(cursor);
  const rest = after ? ordered.filter((s) => before(after, s.place)) : ordered;
  const page = rest.slice(0, pageSize);
  const last = page.at(-1);
  return {
    sessions: page.map(({ info: { at: _at, ...info } }) => info),
    ...(last && rest.length > page.length ? { nextCursor: Buffer.from(JSON.stringify(last.place)).toString("base64url") } : {}),
  };
}

function decode(cursor: string): Place {
  let value: unknown;
  try {
    value = JSON.parse(Buffer.from(cursor, "base64url").toString("utf8"));
  } catch {
    throw notACursor();
  }
  if (typeof value === "object" && value !== null) {
    const { at, id } = value as Record<string, unknown>;
    if (typeof at === "number" && Number.isFinite(at) && typeof id === "string" && id !== "") return { at, id };
  }
  throw notACursor();
}

const notACursor = () => invalidParams("cursor", "not a nextCursor from session/list");
