import fc from "fast-check";
import type { FuzzSizes } from "../settings.js";
import { Nested } from "./json-text.js";

/**
 * Values that break naive code: every JSON type where another is expected, huge strings (with the
 * tail that makes a backtracking pattern work hardest), lone surrogates, control characters, deep
 * nesting, keys that name Object.prototype's members, numbers at the edges of IEEE 754.
 */

/** An object whose own keys are `__proto__`, `constructor`, … — JSON.parse makes them own data properties, as on the wire. */
export function prototypeKeys(): fc.Arbitrary<Record<string, unknown>> {
  const key = fc.constantFrom("__proto__", "constructor", "prototype", "toString", "valueOf", "hasOwnProperty", "__defineGetter__", "isPrototypeOf");
  const value = fc.oneof(
    fc.constant({ polluted: true }),
    fc.constant({ prototype: { polluted: true } }),
    fc.constant(null),
    fc.constant("x"),
    fc.constant(1),
    fc.constant([]),
  );
  return fc.array(fc.tuple(key, value), { minLength: 1, maxLength: 4 }).map((entries) => JSON.parse(`{${entries.map(([k, v]) => `${JSON.stringify(k)}:${JSON.stringify(v)}`).join(",")}}`));
}

const LONE_SURROGATES = ["\ud800", "\udbff", "\udc00", "\udfff", "\udc00\ud800"];

/** Strings with unpaired UTF-16 surrogates (JSON.stringify writes them as \uXXXX escapes, valid JSON). */
export const loneSurrogateString = (): fc.Arbitrary<string> =>
  fc
    .array(fc.oneof(fc.constantFrom(...LONE_SURROGATES), fc.string({ maxLength: 4 }), fc.constant("\ud83d\ude00")), { minLength: 1, maxLength: 6 })
    .map((parts) => parts.join(""))
    .filter((s) => /[\ud800-\udfff]/.test(s.replace(/[\ud800-\udbff][\udc00-\udfff]/g, "")));

/** Control and format characters: NUL, CR, LF, separators, BOM, bidi overrides. */
export const controlString = (): fc.Arbitrary<string> =>
  fc
    .array(fc.oneof(fc.constantFrom("\u0000", "\r", "\n", "\r\n", "\t", "\u000b", "\u001b", "\u007f", "\u2028", "\u2029", "\ufeff", "\u202e", "\u200b", "\ufffd", "\uffff"), fc.string({ maxLength: 3 })), {
      minLength: 1,
      maxLength: 8,
    })
    .map((parts) => parts.join(""));

/**
 * A long run of one character and a tail: `"a"×N + "\0"` is the worst case for a pattern like
 * `^[^\0]*[^\s\0][^\0]*$`, whitespace-only runs are the worst case for "must not be blank".
 */
export const hugeString = (sizes: FuzzSizes): fc.Arbitrary<string> =>
  fc
    .tuple(
      fc.constantFrom("a", " ", "é", "\u0000", "🙂", "\\", '"', "0"),
      fc.integer({ min: Math.min(4096, sizes.hugeString), max: sizes.hugeString }),
      fc.constantFrom("", "\u0000", "\n", "\r", " ", "x", "\ud800"),
    )
    .map(([unit, length, tail]) => unit.repeat(Math.max(1, Math.floor(length / unit.length))) + tail);

/** Arrays or objects nested `depth` levels (written out as text, see json-text.ts). */
export const deeplyNested = (sizes: FuzzSizes): fc.Arbitrary<Nested> =>
  fc
    .tuple(fc.constantFrom<Nested["shape"]>("array", "object", "mixed"), fc.integer({ min: 64, max: sizes.deepNesting }), fc.constantFrom<unknown>("bottom", 1, null, {}))
    .map(([shape, depth, leaf]) => new Nested(shape, depth, leaf));

/** Many elements or keys. */
export const hugeCollection = (sizes: FuzzSizes): fc.Arbitrary<unknown> =>
  fc.tuple(fc.boolean(), fc.integer({ min: 256, max: sizes.hugeCollection })).map(([asArray, size]) =>
    asArray ? Array.from({ length: size }, (_, i) => i) : Object.fromEntries(Array.from({ length: size }, (_, i) => [`k${i}`, i])),
  );

export const edgeNumber = (): fc.Arbitrary<number> =>
  fc.oneof(
    fc.constantFrom(0, -0, -1, 1, 0.5, -0.5, 1e-7, 5e-324, 1e308, -1e308, 2 ** 31, 2 ** 32, 2 ** 53 - 1, 2 ** 53, 2 ** 53 + 2, -(2 ** 53), 1e21, 123456789.123),
    fc.double({ noNaN: true, noDefaultInfinity: true }),
    fc.integer(),
  );

/** A value of any JSON type, small. */
export const anyJson = (): fc.Arbitrary<unknown> => fc.jsonValue({ maxDepth: 3 });

/** Everything above: what a mutation puts where a valid value was. */
export function hostileValue(sizes: FuzzSizes): fc.Arbitrary<unknown> {
  return fc.oneof(
    { weight: 6, arbitrary: anyJson() },
    { weight: 3, arbitrary: fc.constantFrom<unknown>(null, true, false, "", " ", "\t\n", [], {}, [null], "null", "0", "true") },
    { weight: 3, arbitrary: edgeNumber() },
    { weight: 2, arbitrary: fc.string({ unit: "binary", maxLength: 40 }) },
    { weight: 2, arbitrary: loneSurrogateString() },
    { weight: 2, arbitrary: controlString() },
    { weight: 2, arbitrary: prototypeKeys() },
    { weight: 1, arbitrary: hugeString(sizes) },
    { weight: 1, arbitrary: deeplyNested(sizes) },
    { weight: 1, arbitrary: hugeCollection(sizes) },
  );
}
