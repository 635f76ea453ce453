/**
 * The policy file's globs: `*` matches any run of characters (`/` and spaces included), `?` any one
 * character, `\` makes the next character literal; everything else matches itself. A glob is cut
 * at its stars into pieces; the first piece is anchored at the start, the last at the end, and each
 * one between is found at its leftmost place after the previous one, which is always a match when
 * there is one (a star can take whatever a later find skips). No backtracking and no regular
 * expression built from the file: a match costs at most the text's length times the glob's.
 */

/** One run of the glob between stars: literal characters, `undefined` where `?` stands. */
type Piece = ReadonlyArray<string | undefined>;

export interface Glob {
  readonly source: string;
  matches(text: string): boolean;
}

export function compileGlob(source: string): Glob {
  const pieces: Piece[] = [[]];
  const chars = Array.from(source);
  for (let i = 0; i < chars.length; i++) {
    const char = chars[i]!;
    const current = pieces[pieces.length - 1] as Array<string | undefined>;
    if (char === "*") pieces.push([]);
    else if (char === "?") current.push(undefined);
    else if (char === "\\" && i + 1 < chars.length) current.push(chars[++i]);
    else current.push(char);
  }
  return { source, matches: (text) => matchPieces(pieces, Array.from(text)) };
}

function matchPieces(pieces: readonly Piece[], text: readonly string[]): boolean {
  const first = pieces[0]!;
  if (pieces.length === 1) return first.length === text.length && fitsAt(first, text, 0);
  const last = pieces[pieces.length - 1]!;
  if (first.length + last.length > text.length) return false;
  if (!fitsAt(first, text, 0) || !fitsAt(last, text, text.length - last.length)) return false;
  let from = first.length;
  const end = text.length - last.length;
  for (let p = 1; p < pieces.length - 1; p++) {
    const piece = pieces[p]!;
    const at = findFrom(piece, text, from, end);
    if (at < 0) return false;
    from = at + piece.length;
  }
  return true;
}

/** The leftmost place in [from, end) where `piece` fits whole, or -1. */
function findFrom(piece: Piece, text: readonly string[], from: number, end: number): number {
  for (let at = from; at + piece.length <= end; at++) if (fitsAt(piece, text, at)) return at;
  return -1;
}

function fitsAt(piece: Piece, text: readonly string[], at: number): boolean {
  for (let i = 0; i < piece.length; i++) {
    const want = piece[i];
    if (want !== undefined && text[at + i] !== want) return false;
  }
  return true;
}
