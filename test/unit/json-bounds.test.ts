import { describe, expect, it } from "vitest";
import { jsonBoundsError, parseBoundedJson } from "../../src/shared/json-bounds.js";

const bounds = { maxDepth: 3, maxValues: 5 };

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
});
