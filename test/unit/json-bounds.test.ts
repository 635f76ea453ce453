import { describe, expect, it } from "vitest";
import { JSON_BOUNDS, JsonBoundsScan, jsonBoundsError, parseBoundedJson, topLevelId, type JsonBounds } from "../../src/shared/json-bounds.js";

/** The bounds by their definition, one character at a time: the bound passed first, or undefined. */
function referenceBound(text: string, b: JsonBounds): "depth" | "values" | "members" | undefined {
  let depth = 0;
  let values = 0;
  let members = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === '"') {
      for (i++; i < text.length && text[i] !== '"'; i++) if (text[i] === "\\") i++;
      if (i >= text.length) return undefined;
    } else if (c === "[" || c === "{") {
      if (++depth > b.maxDepth) return "depth";
      if (++values > b.maxValues) return "values";
    } else if (c === "]" || c === "}") depth--;
    else if (c === "," && ++values > b.maxValues) return "values";
    else if (c === ":" && ++members > b.maxMembers) return "members";
  }
  return undefined;
}

const bounds = { maxDepth: 3, maxValues: 5, maxMembers: 3 };

describe("json bounds", () => {
  it("counts nesting and values outside strings only", () => {
    expect(jsonBoundsError('[[["x"]]]', bounds)).toBeUndefined();
    expect(jsonBoundsError('[[[["x"]]]]', bounds)?.bound).toBe("depth");
    // Brackets, commas and escaped quotes inside strings are text.
    expect(jsonBoundsError(JSON.stringify(["[[[[[,,,,,,", 'a"[[[[[\\"{{{{', "\\\\"]), bounds)).toBeUndefined();
    expect(jsonBoundsError("[1,2,3,4]", bounds)).toBeUndefined();
    expect(jsonBoundsError("[1,2,3,4,5,6]", bounds)?.bound).toBe("values");
    expect(jsonBoundsError('{"a":{},"b":[],"c":1}', bounds)).toBeUndefined();
    expect(jsonBoundsError('{"a":{},"b":[],"c":[1]}', bounds)?.message).toBe("more than 5 values (the gateway's limit)");
  });

  it("counts object members over all the message's objects, colons in strings aside", () => {
    expect(jsonBoundsError('{"a":1,"b:":{"c":"::"}}', bounds)).toBeUndefined();
    expect(jsonBoundsError('{"a":1,"b":2,"c":{"d":4}}', bounds)?.message).toBe("more than 3 object members (the gateway's limit)");
    expect(jsonBoundsError('{"a":1,"b":2,"c":{"d":4}}', bounds)?.bound).toBe("members");
  });

  it("finds the end of a string after any run of backslashes", () => {
    for (const text of ["\\", "\\\\", '\\"', '"\\', "a\\\\\\\"b"]) {
      // Past the string, the brackets count again.
      expect(jsonBoundsError(`[${JSON.stringify(text)},[[[0]]]]`, bounds)?.bound, text).toBe("depth");
      expect(jsonBoundsError(`[${JSON.stringify(text)},[0]]`, bounds), text).toBeUndefined();
    }
  });

  it("leaves text that is not JSON to JSON.parse", () => {
    expect(jsonBoundsError('["unterminated', bounds)).toBeUndefined();
    expect(() => parseBoundedJson("[1,", bounds)).toThrow(SyntaxError);
    expect(() => parseBoundedJson("[[[[0]]]]", bounds)).toThrow("nested more than 3 levels deep");
    expect(parseBoundedJson('{"a":[1,2]}', bounds)).toEqual({ a: [1, 2] });
  });

  // Most messages are told apart without the scan (fewer brackets than the depth bound, shorter
  // than the values bound): the answers must be the scan's, on both sides of each bound.
  it("answers as the scan does at the default bounds, for messages on either side of each bound", () => {
    const deep = (n: number) => "[".repeat(n) + "]".repeat(n);
    expect(jsonBoundsError(deep(JSON_BOUNDS.maxDepth))).toBeUndefined();
    expect(jsonBoundsError(deep(JSON_BOUNDS.maxDepth + 1))?.bound).toBe("depth");
    expect(jsonBoundsError("[".repeat(JSON_BOUNDS.maxDepth + 1))?.bound).toBe("depth");
    // Brackets in strings count only at a glance: past the bound, the scan looks again and passes them.
    const bracketsInStrings = JSON.stringify({ version: 18, type: "request", id: "r1", method: "session.submit", params: { text: "[{".repeat(200) } });
    expect(jsonBoundsError(bracketsInStrings)).toBeUndefined();
    const manyValues = `[${"0,".repeat(JSON_BOUNDS.maxValues)}0]`;
    expect(jsonBoundsError(manyValues)?.bound).toBe("values");
    expect(jsonBoundsError(`[${"0,".repeat(JSON_BOUNDS.maxValues - 2)}0]`)).toBeUndefined();
    expect(jsonBoundsError(JSON.stringify({ text: "x".repeat(JSON_BOUNDS.maxValues * 2) }))).toBeUndefined();
    // A tool schema of 20,000 properties (fresh keys, each one a string to intern): refused; colons in a string are text.
    const properties = (count: number) => JSON.stringify({ type: "object", properties: Object.fromEntries(Array.from({ length: count }, (_, i) => [`p${i}`, 0])) });
    expect(jsonBoundsError(properties(20_000))?.bound).toBe("members");
    expect(jsonBoundsError(properties(JSON_BOUNDS.maxMembers - 2))).toBeUndefined();
    expect(jsonBoundsError(properties(JSON_BOUNDS.maxMembers - 1))?.bound).toBe("members");
    expect(jsonBoundsError(JSON.stringify({ text: ":".repeat(JSON_BOUNDS.maxMembers * 2) }))).toBeUndefined();

    const pieces = ["[", "]", "{", "}", ",", '"[{,"', '"\\"', '"\\\\"', "0", '"a"', ":"];
    let seed = 7;
    const random = () => ((seed = (seed * 1103515245 + 12345) & 0x7fffffff) / 0x7fffffff);
    for (const b of [{ maxDepth: 3, maxValues: 12, maxMembers: 4 }, { maxDepth: 8, maxValues: 40, maxMembers: 10 }, JSON_BOUNDS]) {
      for (let n = 0; n < 2000; n++) {
        const length = Math.floor(random() * 60);
        const text = Array.from({ length }, () => pieces[Math.floor(random() * pieces.length)]).join("");
        expect(jsonBoundsError(text, b)?.bound, text).toBe(referenceBound(text, b));
      }
    }
  });
});

/** The bound the pieces pass when fed one after another to one scan, and where in the whole text it was passed. */
function scanInPieces(pieces: string[], b: JsonBounds): { bound?: "depth" | "values" | "members"; at?: number } {
  const scan = new JsonBoundsScan(b);
  let offset = 0;
  for (const piece of pieces) {
    const refused = scan.feed(piece);
    if (refused) return { bound: refused.bound, at: offset + scan.refusedAt };
    offset += piece.length;
  }
  return {};
}

describe("JsonBoundsScan (text in pieces)", () => {
  it("carries an escape split between pieces: the escaped quote does not end the string", () => {
    // ["\"[[[[ ..."]: the backslash ends the first piece, the quote it escapes starts the next.
    expect(scanInPieces(['["a\\', '"[[[[[[", 1]'], bounds)).toEqual({});
    // An escaped backslash split the same way: the quote after it does end the string.
    expect(scanInPieces(['["a\\', '\\"', ",[[[[0]]]]]"], bounds)).toEqual({ bound: "depth", at: 9 });
    // A piece that is a lone backslash, then the escaped character alone.
    expect(scanInPieces(['["', "\\", '"', "[[[[", '"]'], bounds)).toEqual({});
  });

  it("passes brackets and commas inside a string that spans pieces", () => {
    expect(scanInPieces(['["[[[[', "{{{{,,,,,,", ']]]]"]'], bounds)).toEqual({});
    expect(scanInPieces(['["[[[[', '{{{{"', ",[[[0]]]]"], bounds)).toEqual({ bound: "depth", at: 14 });
  });

  it("refuses at the piece that passes the bound, and says so for every later piece", () => {
    const scan = new JsonBoundsScan(bounds);
    expect(scan.feed("[[")).toBeUndefined();
    expect(scan.feed("[0,[")?.bound).toBe("depth");
    expect(scan.refusedAt).toBe(3);
    expect(scan.feed("]]]]")?.bound).toBe("depth");
  });

  it("answers as one scan of the whole text, wherever the text is cut", () => {
    const pieces = ["[", "]", "{", "}", ",", '"[{,"', '"\\"', '"\\\\"', '"\\\\\\""', "0", '"a"', ":", "\\"];
    let seed = 11;
    const random = () => ((seed = (seed * 1103515245 + 12345) & 0x7fffffff) / 0x7fffffff);
    for (const b of [{ maxDepth: 3, maxValues: 12, maxMembers: 4 }, { maxDepth: 8, maxValues: 40, maxMembers: 10 }]) {
      for (let n = 0; n < 3000; n++) {
        const text = Array.from({ length: Math.floor(random() * 60) }, () => pieces[Math.floor(random() * pieces.length)]).join("");
        const cuts: string[] = [];
        for (let at = 0; at < text.length; ) {
          const size = Math.floor(random() * 5);
          cuts.push(text.slice(at, at + size));
          at += size;
        }
        const whole = new JsonBoundsScan(b);
        const expected = whole.feed(text);
        expect(expected?.bound, text).toBe(referenceBound(text, b));
        expect(scanInPieces(cuts, b), JSON.stringify(cuts)).toEqual(expected ? { bound: expected.bound, at: whole.refusedAt } : {});
      }
    }
  });
});

describe("topLevelId", () => {
  const deep = (n: number) => "[".repeat(n) + "]".repeat(n);
  it("reads the top-level id of a message refused for its shape, as JSON.parse would", () => {
    expect(topLevelId(`{"jsonrpc":"2.0","id":"a\\"b","method":"m","params":${deep(5000)}}`)).toBe('a"b');
    expect(topLevelId(` {"params":${deep(100)},"id" : 42}`)).toBe(42);
    expect(topLevelId(`{"id":1,"id":"last"}`)).toBe("last");
  });
  it("reads no id below the top level, of a non-object, or one a request may not carry", () => {
    expect(topLevelId(`{"params":{"id":"inner"}}`)).toBeUndefined();
    expect(topLevelId(`[{"id":"in a batch"}]`)).toBeUndefined();
    expect(topLevelId(`{"id":1.5}`)).toBeUndefined();
    expect(topLevelId(`{"id":9007199254740993}`)).toBeUndefined();
    expect(topLevelId(`{"id":null}`)).toBeUndefined();
    expect(topLevelId(`{"key":"id","x":"id"}`)).toBeUndefined();
  });
});
