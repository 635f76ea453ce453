import fc from "fast-check";
import type { FuzzSizes } from "../settings.js";
import { anyJson } from "./hostile.js";
import { describeValue, jsonText } from "./json-text.js";
import { substituteLiveValues, type LiveValues } from "./live-values.js";

/**
 * What one case sends, piece by piece: a message, a batch, raw text (broken JSON and other
 * garbage), raw bytes (invalid UTF-8, where a text frame or line or body goes) or a binary frame.
 * A transport turns each piece into what it carries (a WebSocket message, an NDJSON line, a body).
 */

export type Piece =
  | { kind: "message"; value: unknown }
  | { kind: "batch"; values: unknown[] }
  | { kind: "text"; text: string }
  | { kind: "bytes"; bytes: Uint8Array }
  | { kind: "binary"; bytes: Uint8Array };

export interface RenderedPiece {
  data: Buffer;
  /** A binary WebSocket frame (elsewhere: just bytes). */
  binary: boolean;
}

export function renderPiece(piece: Piece, live: LiveValues): RenderedPiece {
  switch (piece.kind) {
    case "message":
      return { data: Buffer.from(substituteLiveValues(jsonText(piece.value), live)), binary: false };
    case "batch":
      return { data: Buffer.from(substituteLiveValues(jsonText(piece.values), live)), binary: false };
    case "text":
      return { data: Buffer.from(substituteLiveValues(piece.text, live)), binary: false };
    case "bytes":
      return { data: Buffer.from(piece.bytes), binary: false };
    case "binary":
      return { data: Buffer.from(piece.bytes), binary: true };
  }
}

export function describePiece(piece: Piece): string {
  switch (piece.kind) {
    case "message":
      return `message ${describeValue(piece.value)}`;
    case "batch":
      return `batch ${describeValue(piece.values)}`;
    case "text":
      return `text ${describeValue(piece.text)}`;
    case "bytes":
    case "binary":
      return `${piece.kind} ${bytesPreview(piece.bytes)}`;
  }
}

function bytesPreview(bytes: Uint8Array): string {
  const shown = Buffer.from(bytes.subarray(0, 300));
  return `${JSON.stringify(shown.toString("latin1"))}${bytes.length > 300 ? `… (${bytes.length} bytes)` : ""} hex ${shown.subarray(0, 64).toString("hex")}`;
}

/** Byte sequences that are not UTF-8: stray continuation bytes, overlong forms, encoded surrogates, beyond U+10FFFF, truncated sequences. */
const INVALID_UTF8: number[][] = [[0x80], [0xbf], [0xc0, 0x80], [0xc1, 0xbf], [0xe0, 0x80, 0x80], [0xed, 0xa0, 0x80], [0xed, 0xbf, 0xbf], [0xf4, 0x90, 0x80, 0x80], [0xf5], [0xff], [0xfe], [0xe2, 0x82], [0xf0, 0x9f, 0x98], [0xc3]];

/** Text that is almost a message, or nothing like one. */
function garbageText(message: fc.Arbitrary<unknown>, sizes: FuzzSizes): fc.Arbitrary<string> {
  const json = message.map(jsonText);
  return fc.oneof(
    fc.tuple(json, fc.nat()).map(([text, cut]) => text.slice(0, cut % Math.max(1, text.length))),
    fc.tuple(json, fc.constantFrom("}", "]", ",", "x", "\u0000", " {}", "\n{}", "//", "\ufeff")).map(([text, junk]) => text + junk),
    json.map((text) => `\ufeff${text}`),
    fc.constantFrom("", " ", "\t\r\n", "\u00a0", "\u2028", "null", "true", "0", "-0", "1e400", '"text"', "[]", "[[]]", "[{}]", "{}", "[1,2,3]", "[null]", '{"a":1,"a":2}', "{'a':1}", "NaN", "[1,]", '{"__proto__":{"polluted":true}}'),
    fc.integer({ min: 1, max: sizes.deepNesting }).map((depth) => "[".repeat(depth)),
    fc.integer({ min: 1, max: sizes.deepNesting }).map((depth) => '{"a":'.repeat(depth)),
    fc.string({ unit: "binary", maxLength: 60 }),
    fc.string({ maxLength: 60 }),
  );
}

function invalidUtf8Bytes(message: fc.Arbitrary<unknown>): fc.Arbitrary<Uint8Array> {
  const bad = fc.array(fc.constantFrom(...INVALID_UTF8), { minLength: 1, maxLength: 3 }).map((parts) => parts.flat());
  return fc.oneof(
    // Spliced into a message (often inside a string, where only the encoding is wrong).
    fc.tuple(message.map((m) => Buffer.from(jsonText(m))), bad, fc.nat()).map(([text, inserted, at]) => {
      const position = at % (text.length + 1);
      return new Uint8Array(Buffer.concat([text.subarray(0, position), Buffer.from(inserted), text.subarray(position)]));
    }),
    fc.uint8Array({ minLength: 1, maxLength: 64 }),
    bad.map((b) => new Uint8Array(b)),
  );
}

export interface PieceOptions {
  /** The dialect has JSON-RPC batches. */
  batches: boolean;
  /** Largest batch the transport accepts (a larger one is generated too, to be refused). */
  maxBatch?: number;
}

/** One case: one to four pieces, mostly (mutated) messages. */
export function casePieces(message: fc.Arbitrary<unknown>, sizes: FuzzSizes, options: PieceOptions): fc.Arbitrary<Piece[]> {
  return fc.array(onePiece(message, sizes, options), { minLength: 1, maxLength: 4 });
}

/** One piece: a (mutated) message most of the time. */
export function onePiece(message: fc.Arbitrary<unknown>, sizes: FuzzSizes, options: PieceOptions): fc.Arbitrary<Piece> {
  return fc.oneof(
    { weight: 12, arbitrary: message.map((value): Piece => ({ kind: "message", value })) },
    ...(options.batches
      ? [
          {
            weight: 4,
            arbitrary: fc.array(fc.oneof({ weight: 5, arbitrary: message }, { weight: 1, arbitrary: anyJson() }), { maxLength: 6 }).map((values): Piece => ({ kind: "batch", values })),
          },
          {
            weight: 1,
            // Over the element limit (with a small element: this is about the count, not the bytes).
            arbitrary: fc
              .tuple(message, fc.integer({ min: (options.maxBatch ?? 100) + 1, max: (options.maxBatch ?? 100) + 20 }))
              .map(([m, n]): Piece => ({ kind: "batch", values: Array.from({ length: n }, () => (jsonText(m).length > 2_000 ? { jsonrpc: "2.0", id: 1, method: "ping" } : m)) })),
          },
        ]
      : []),
    { weight: 4, arbitrary: garbageText(message, sizes).map((text): Piece => ({ kind: "text", text })) },
    { weight: 2, arbitrary: invalidUtf8Bytes(message).map((bytes): Piece => ({ kind: "bytes", bytes })) },
    { weight: 1, arbitrary: fc.uint8Array({ maxLength: 32 }).map((bytes): Piece => ({ kind: "binary", bytes })) },
  );
}
