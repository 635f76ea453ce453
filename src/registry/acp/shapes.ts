import { literal, nul, obj, opt, ref, type Schema } from "../schema.js";

/**
 * The few shapes ACP's official schema is built from, so each definition below reads like its
 * counterpart there: every ACP type carries an optional `_meta` object, optional fields usually
 * admit `null`, closed enums are a `oneOf` of constants, open ones end with a plain string, and
 * tagged unions put the tag beside an `allOf` reference to the variant's fields.
 */

/** `_meta`, reserved on every ACP type for extension data (protocol §12). */
const META: Schema = { type: ["object", "null"], additionalProperties: true };

/** An ACP object type: the given properties (wrap optional ones in `opt`) plus `_meta`. */
export const acpObj = (props: Record<string, unknown>, extra?: Schema): Schema => obj({ ...props, _meta: opt(META) }, { extra });

export const string = (): Schema => ({ type: "string" });
export const boolean = (): Schema => ({ type: "boolean" });
export const number = (): Schema => ({ type: "number" });
/** ACP integers carry no bound beyond their format (int64, uint64, …), which JSON Schema does not check. */
export const integer = (extra: Schema = {}): Schema => ({ type: "integer", ...extra });
export const unsigned = (): Schema => integer({ minimum: 0 });

/** A value or null: ACP's spelling of an optional field. */
export const orNull = (type: "string" | "boolean" | "number" | "integer" | "array" | "object", extra: Schema = {}): Schema => ({
  type: [type, "null"],
  ...extra,
});
export const refOrNull = (name: string): Schema => ({ anyOf: [ref(name), nul()] });
export const arrayOf = (items: Schema): Schema => ({ type: "array", items });
export const arrayOrNull = (items: Schema): Schema => orNull("array", { items });

/** A closed string enum. */
export const closedStrings = (...values: string[]): Schema => ({ oneOf: values.map((v) => literal(v)) });
/** A string enum that admits values newer versions may add. */
export const openStrings = (...values: string[]): Schema => ({ anyOf: [...values.map((v) => literal(v)), string()] });

/** One variant of a union tagged by `key`: the tag's value beside the variant type's fields. */
export const tagged = (key: string, value: string, variant: string): Schema => ({
  type: "object",
  properties: { [key]: literal(value) },
  required: [key],
  allOf: [ref(variant)],
});

/** Just the tag of a variant, for the `not` of an open union's catch-all branch. */
const tagOnly = (key: string, value: string): Schema => ({ type: "object", properties: { [key]: literal(value) }, required: [key] });

/** The catch-all branch of an open tagged union: any other tag value, with any fields. */
export const otherTag = (key: string, known: string[], extra: Schema = {}): Schema => ({
  type: "object",
  properties: { [key]: string() },
  required: [key],
  ...extra,
  not: { anyOf: known.map((value) => tagOnly(key, value)) },
});

export { ref };
