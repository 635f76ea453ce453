/**
 * Bounds on the shape of JSON a peer sends, checked before JSON.parse. JSON.parse is synchronous
 * and its cost grows with the number of values, not the bytes: 32 MiB of `[[[[…` or of `{},{},…`
 * holds the event loop for seconds (and deep values then overflow the stack of whatever walks
 * them), while 32 MiB of one base64 string parses in milliseconds. So a message is scanned first,
 * by a loop that looks only at brackets, commas and quotes (strings are skipped with indexOf), and
 * that stops at the first bound passed: refusing the worst message costs what a small one does.
 * Object members are bounded apart from values: each distinct key is a string V8 interns as it
 * parses, several times the cost of a value, so 20,000 fresh keys (a tool schema of 20,000
 * properties, about 530 KB) held the loop 60–160 ms on this 2-core machine where 100,000 values
 * take 5–20 ms.
 */

export interface JsonBounds {
  /** Arrays and objects nested in one another. */
  maxDepth: number;
  /** Arrays, objects and the values after a comma, counted together (about the number of values). */
  maxValues: number;
  /** Members of objects, in all the message's objects together (a colon outside strings is one). */
  maxMembers: number;
}

/** Deep enough for any protocol message and the JSON Schemas clients put in them; parsing 64 levels costs nothing. */
export const MAX_JSON_DEPTH = 64;
/** A message at this bound parses in tens of milliseconds on a small machine. */
export const MAX_JSON_VALUES = 100_000;
/**
 * Ten times what the largest ordinary client message holds (128 dynamic tools of about 30 members
 * each); at this bound even fresh keys parse in a few tens of milliseconds.
 */
export const MAX_JSON_MEMBERS = 10_000;

export const JSON_BOUNDS: JsonBounds = { maxDepth: MAX_JSON_DEPTH, maxValues: MAX_JSON_VALUES, maxMembers: MAX_JSON_MEMBERS };

/**
 * For what the gateway wrote itself (its own frames, read back by the inspector): depth bounded as
 * for any message, so nothing that walks a frame overflows its stack, but not its size, which is
 * the gateway's own doing (a long thread's history is one large response).
 */
export const OWN_JSON_BOUNDS: JsonBounds = { maxDepth: MAX_JSON_DEPTH, maxValues: Number.POSITIVE_INFINITY, maxMembers: Number.POSITIVE_INFINITY };

/** What a parse refused for its shape, before parsing (its message says which bound). */
export class JsonBoundsError extends Error {
  constructor(
    message: string,
    readonly bound: "depth" | "values" | "members",
    readonly limit: number,
  ) {
    super(message);
    this.name = "JsonBoundsError";
  }
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_ARRAY = 0x5b;
const OPEN_OBJECT = 0x7b;
const CLOSE_ARRAY = 0x5d;
const CLOSE_OBJECT = 0x7d;
const COMMA = 0x2c;
const COLON = 0x3a;

/**
 * The bound `text` passes, or undefined when it passes none. Text that is not JSON at all passes
 * here too (JSON.parse then says what is wrong with it); the scan never costs more than one pass.
 */
export function jsonBoundsError(text: string, bounds: JsonBounds = JSON_BOUNDS): JsonBoundsError | undefined {
  if (withinBoundsAtAGlance(text, bounds)) return undefined;
  return new JsonBoundsScan(bounds).feed(text);
}

/**
 * The scan of jsonBoundsError over text that arrives in pieces (an HTTP body's chunks): each piece
 * is scanned as it comes, carrying over whether it ends inside a string or just after a backslash
 * there, so a body is refused at the piece that passes a bound without waiting for the rest. The
 * pieces may be bytes of UTF-8 read as latin1: the characters looked at are ASCII, and no byte of
 * a multi-byte character is one of them.
 */
export class JsonBoundsScan {
  private depth = 0;
  private values = 0;
  private members = 0;
  /** Inside a string at the end of the last piece; `afterBackslash`: its last character escapes the next piece's first. */
  private inString = false;
  private afterBackslash = false;
  private passed: JsonBoundsError | undefined;
  /** In the piece that passed a bound, the index of the character that did. */
  refusedAt = -1;

  constructor(private readonly bounds: JsonBounds = JSON_BOUNDS) {}

  /** Scans the next piece: the bound passed so far (once passed, every later piece answers it unread), or undefined. */
  feed(text: string): JsonBoundsError | undefined {
    if (this.passed || text.length === 0) return this.passed;
    const { bounds } = this;
    const next = notYetLooked();
    let at = 0;
    if (this.afterBackslash) {
      this.afterBackslash = false;
      at = 1;
    }
    if (this.inString) {
      const end = stringEndFrom(text, at, next);
      if (end < 0) return this.endsInString(end);
      this.inString = false;
      at = end + 1;
    }
    // A loop over character codes, not a regex match per structural character: a match allocates
    // its result, which made the scan of a message of many small values cost more than parsing it.
    for (let length = text.length; at < length; at++) {
      const c = text.charCodeAt(at);
      if (c === QUOTE) {
        const end = stringEndFrom(text, at + 1, next);
        if (end < 0) return this.endsInString(end);
        at = end;
      } else if (c === OPEN_ARRAY || c === OPEN_OBJECT) {
        if (++this.depth > bounds.maxDepth) return this.pass(at, new JsonBoundsError(`nested more than ${bounds.maxDepth} levels deep (the gateway's limit)`, "depth", bounds.maxDepth));
        if (++this.values > bounds.maxValues) return this.pass(at, tooMany(bounds));
      } else if (c === CLOSE_ARRAY || c === CLOSE_OBJECT) {
        this.depth--;
      } else if (c === COMMA && ++this.values > bounds.maxValues) {
        return this.pass(at, tooMany(bounds));
      } else if (c === COLON && ++this.members > bounds.maxMembers) {
        return this.pass(at, new JsonBoundsError(`more than ${bounds.maxMembers} object members (the gateway's limit)`, "members", bounds.maxMembers));
      }
    }
    return undefined;
  }

  private endsInString(end: number): undefined {
    this.inString = true;
    this.afterBackslash = end === ESCAPE_GOES_ON;
    return undefined;
  }

  private pass(at: number, error: JsonBoundsError): JsonBoundsError {
    this.refusedAt = at;
    return (this.passed = error);
  }
}

/**
 * Whether `text` cannot pass any bound, told without the scan (almost every message): the depth
 * is at most the number of `[` and `{` in the text, strings included, the values at most its
 * length (each one past the first takes a bracket or a comma), and the members at most its number
 * of colons. Brackets and colons are counted with indexOf, which skips the text between them at
 * memchr speed, and each count stops at its bound: a message with more than that is scanned as
 * before. For the relay's small messages this is a few calls, where the scan was a regex match per
 * bracket, comma and string (it cost more than JSON.parse of the same message).
 */
function withinBoundsAtAGlance(text: string, bounds: JsonBounds): boolean {
  if (text.length > bounds.maxValues) return false;
  return fewerThan(text, ["[", "{"], bounds.maxDepth) && fewerThan(text, [":"], bounds.maxMembers);
}

/** Whether `text` holds at most `max` of the characters `of`, together. */
function fewerThan(text: string, of: string[], max: number): boolean {
  // Text this short cannot hold more (the loop below would only confirm it).
  if (text.length <= max) return true;
  let found = 0;
  for (const character of of) {
    for (let at = text.indexOf(character); at !== -1; at = text.indexOf(character, at + 1)) {
      if (++found > max) return false;
    }
  }
  return true;
}

const tooMany = (bounds: JsonBounds) => new JsonBoundsError(`more than ${bounds.maxValues} values (the gateway's limit)`, "values", bounds.maxValues);

/**
 * Where the next backslash is, not yet looked for (before any position, so the first string looks):
 * the first string looks for it from its own quote on, so a message refused before any string
 * (`[[[[…`) is never searched to its end.
 */
const notYetLooked = () => ({ backslash: -Infinity });

/** What stringEndFrom answers for a string the text ends in, when its last character is a backslash that escapes whatever comes next. */
const ESCAPE_GOES_ON = -2;

/** The index of the quote closing the string opened at `open`, or -1. */
function stringEnd(text: string, open: number, next: { backslash: number }): number {
  return Math.max(stringEndFrom(text, open + 1, next), -1);
}

/**
 * The index of the quote closing a string whose text goes on at `from` (not just after a backslash
 * escaping it); -1 when the text ends inside it, ESCAPE_GOES_ON when it ends on a backslash that
 * escapes the next character. A string without backslashes is skipped with one indexOf; one with
 * escapes is stepped through from its first backslash, so every character is looked at at most
 * once (`next` keeps where the next backslash is).
 */
function stringEndFrom(text: string, from: number, next: { backslash: number }): number {
  const quote = text.indexOf('"', from);
  if (quote < 0) return endsEscaping(text, from) ? ESCAPE_GOES_ON : -1;
  if (next.backslash !== -1 && next.backslash < from) next.backslash = text.indexOf("\\", from);
  if (next.backslash === -1 || next.backslash > quote) return quote;
  let i = next.backslash;
  for (; i < text.length; ) {
    const c = text.charCodeAt(i);
    if (c === QUOTE) return i;
    i += c === BACKSLASH ? 2 : 1;
  }
  return i > text.length ? ESCAPE_GOES_ON : -1;
}

/** Whether `text`, inside a string from `from` on, ends on a backslash escaping what follows: an odd run of them. */
function endsEscaping(text: string, from: number): boolean {
  let run = 0;
  for (let i = text.length - 1; i >= from && text.charCodeAt(i) === BACKSLASH; i--) run++;
  return run % 2 === 1;
}

/**
 * The `id` member of a message refused for its shape, read without parsing it: when `text` is an
 * object, the last top-level `"id"` key's value if it is a string or a safe integer (what a request
 * id may be), else undefined. A refusal can then carry the id of the request it answers, as the
 * answer to any other invalid request does. One pass, like the bounds' scan; only strings and the
 * brackets around them are looked at, and nothing below the top level is read.
 */
export function topLevelId(text: string): string | number | undefined {
  const start = text.search(/\S/);
  if (start < 0 || text.charCodeAt(start) !== OPEN_OBJECT) return undefined;
  let depth = 0;
  let id: string | number | undefined;
  const next = notYetLooked();
  for (let at = start, length = text.length; at < length; at++) {
    const c = text.charCodeAt(at);
    if (c === QUOTE) {
      const end = stringEnd(text, at, next);
      if (end < 0) return id;
      const key = at;
      at = end;
      if (depth !== 1 || end - key !== 3 || text.slice(key, end + 1) !== '"id"') continue;
      const colon = /\s*:\s*/y;
      colon.lastIndex = end + 1;
      if (!colon.exec(text)) continue;
      const value = colon.lastIndex;
      if (text.charCodeAt(value) === QUOTE) {
        const close = stringEnd(text, value, next);
        if (close < 0) return id;
        id = JSON.parse(text.slice(value, close + 1)) as string;
        at = close;
      } else {
        const number = /-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?/y;
        number.lastIndex = value;
        const found = number.exec(text);
        const n = found ? Number(found[0]) : NaN;
        id = found && Number.isSafeInteger(n) && /^-?\d+$/.test(found[0]) ? n : undefined;
      }
    } else if (c === OPEN_ARRAY || c === OPEN_OBJECT) {
      depth++;
    } else if (c === CLOSE_ARRAY || c === CLOSE_OBJECT) {
      depth--;
    }
  }
  return id;
}

/** JSON.parse, after the bounds: throws JsonBoundsError for a shape past them, SyntaxError for text that is not JSON. */
export function parseBoundedJson(text: string, bounds: JsonBounds = JSON_BOUNDS): unknown {
  const refused = jsonBoundsError(text, bounds);
  if (refused) throw refused;
  return JSON.parse(text);
}
