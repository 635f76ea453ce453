import fc from "fast-check";
import type { FuzzSettings } from "../settings.js";
import { onePiece, type Piece } from "./pieces.js";

/** One POST /rpc request: a body (any piece) and a Content-Type that is right, nearly right or wrong. */
export interface HttpCase {
  piece: Piece;
  /** undefined: no Content-Type header. */
  contentType: string | undefined;
}

const JSON_TYPES = ["application/json", "application/json; charset=utf-8", "application/json;charset=UTF-8", 'application/json; charset="utf-8"'];
const OTHER_TYPES = ["text/plain", "application/x-www-form-urlencoded", "text/json", "application/jsonx", "multipart/form-data; boundary=x", "*/*", ""];
/** Charsets other than UTF-8: the body must be refused (415), not read as UTF-8. */
export const FOREIGN_CHARSETS = ["application/json; charset=utf-16", "application/json; charset=iso-8859-1", "application/json; charset=latin1", "application/json; charset=utf-32le"];

/** What a Content-Type says: JSON or not, and whether it names a charset other than UTF-8. */
export function mediaType(contentType: string | undefined): { json: boolean; foreignCharset: boolean } {
  if (contentType === undefined) return { json: false, foreignCharset: false };
  const [type, ...params] = contentType.split(";").map((p) => p.trim().toLowerCase());
  const charset = params.find((p) => p.startsWith("charset="))?.slice("charset=".length).replace(/"/g, "");
  return { json: type === "application/json", foreignCharset: charset !== undefined && charset !== "utf-8" };
}

export function httpCases(message: fc.Arbitrary<unknown>, settings: FuzzSettings, options: { maxBatch: number }): fc.Arbitrary<HttpCase> {
  return fc.record({
    piece: onePiece(message, settings.sizes, { batches: true, maxBatch: options.maxBatch }),
    contentType: fc.oneof(
      { weight: 12, arbitrary: fc.constantFrom(...JSON_TYPES) },
      { weight: 2, arbitrary: fc.constantFrom<string | undefined>(...OTHER_TYPES, undefined) },
      { weight: 2, arbitrary: fc.constantFrom(...FOREIGN_CHARSETS) },
    ),
  });
}
