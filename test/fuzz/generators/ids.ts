import fc from "fast-check";
import { loneSurrogateString, prototypeKeys } from "./hostile.js";

/** The id a message is sent without (the key is left out). */
export const MISSING_ID: unique symbol = Symbol("missing id");
export type GeneratedId = unknown | typeof MISSING_ID;

/** Ordinary ids of one type, as a well-behaved client makes them. */
export const wellFormedStringId = (): fc.Arbitrary<string> =>
  fc.oneof(fc.uuid(), fc.string({ minLength: 1, maxLength: 12 }).filter((s) => s.trim() !== ""), fc.nat().map((n) => `req-${n}`));

/** Every id type a client can send: number, string, null, float, object, missing, and their edge cases. */
export function anyId(): fc.Arbitrary<GeneratedId> {
  return fc.oneof(
    { weight: 6, arbitrary: wellFormedStringId() },
    { weight: 4, arbitrary: fc.integer({ min: -1_000, max: 1_000_000 }) },
    { weight: 2, arbitrary: fc.constantFrom<unknown>(0, -0, -1, 2 ** 53 - 1, 2 ** 53 + 2, 1e21, -(2 ** 31)) },
    { weight: 2, arbitrary: fc.constant(null) },
    { weight: 2, arbitrary: fc.constant(MISSING_ID) },
    { weight: 2, arbitrary: fc.constantFrom<unknown>(1.5, -0.25, 1e-7, 3.0000001) },
    { weight: 2, arbitrary: fc.constantFrom<unknown>("", " ", "\t", "\n") },
    { weight: 1, arbitrary: fc.string({ unit: "binary", minLength: 1, maxLength: 20 }) },
    { weight: 1, arbitrary: loneSurrogateString() },
    { weight: 1, arbitrary: fc.constantFrom<unknown>({}, { id: 1 }, [], [1], true, false) },
    { weight: 1, arbitrary: prototypeKeys() },
    { weight: 1, arbitrary: fc.integer({ min: 1024, max: 65_536 }).map((n) => "i".repeat(n)) },
  );
}

/** `message` with its `id` set to `id` (or removed), keeping the key order of the rest. */
export function withId(message: Record<string, unknown>, id: GeneratedId): Record<string, unknown> {
  const { id: _old, ...rest } = message;
  return id === MISSING_ID ? rest : { id, ...rest };
}
