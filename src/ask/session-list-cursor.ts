import { parseBoundedJson } from "../shared/json-bounds.js";
/**
 * session/list cursors: the position of the last session of a page in the list's order (creation
 * time, then id), as base64url JSON. Opaque to clients; anything that does not decode to a
 * position is refused rather than read as "from the start".
 */

export interface ListPosition {
  /** Epoch milliseconds. */
  createdAt: number;
  sessionId: string;
}

export function encodeListCursor(position: ListPosition): string {
  return Buffer.from(JSON.stringify([position.createdAt, position.sessionId])).toString("base64url");
}

/** The position a cursor stands for; null when it is not one this gateway made. */
export function decodeListCursor(cursor: string): ListPosition | null {
  let value: unknown;
  try {
    value = parseBoundedJson(Buffer.from(cursor, "base64url").toString("utf8"));
  } catch {
    return null;
  }
  if (!Array.isArray(value) || value.length !== 2) return null;
  const [createdAt, sessionId] = value as unknown[];
  if (typeof createdAt !== "number" || !Number.isFinite(createdAt) || typeof sessionId !== "string" || sessionId === "") return null;
  return { createdAt, sessionId };
}
