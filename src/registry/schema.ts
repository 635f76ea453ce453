/**
 * The small vocabulary the registry is written in: JSON Schema (draft 2019-09) fragments built by
 * helpers, plus three markers that are resolved per protocol version when a bundle is generated
 * (see resolve.ts). Keeping version differences as markers on one tree is what lets the Tau v13
 * and v18 bundles come from a single registry instead of two copies.
 */

/** A JSON Schema fragment, possibly still holding version markers. */
export type Schema = { [keyword: string]: unknown };

/** Inclusive protocol-version range. Open ends mean "since the beginning" / "still present". */
export interface VersionRange {
  since?: number;
  until?: number;
}

/** A property, union member, enum value or entry that exists only in some versions. */
export class Versioned<T = unknown> {
  constructor(
    readonly range: VersionRange,
    readonly value: T,
    readonly note?: string,
  ) {}
}

/** A value that differs between versions; the first variant whose range matches wins. */
export class Variants<T = unknown> {
  constructor(readonly variants: ReadonlyArray<Versioned<T>>) {}
}

/** Placeholder for "the protocol version of the bundle being generated" (Tau's `version`). */
export class ProtocolVersionConst {}

/** Marks an object property as optional; only meaningful inside {@link obj}. */
export class Optional<T = unknown> {
  constructor(readonly value: T) {}
}

export const since = <T>(version: number, value: T, note?: string) => new Versioned({ since: version }, value, note);
export const until = <T>(version: number, value: T, note?: string) => new Versioned({ until: version }, value, note);
export const during = <T>(range: VersionRange, value: T, note?: string) => new Versioned(range, value, note);
export const byVersion = <T>(...variants: Versioned<T>[]) => new Variants(variants);
export const protocolVersion = () => new ProtocolVersionConst();
export const opt = <T>(value: T) => new Optional(value);

export function inRange(range: VersionRange, version: number): boolean {
  return (range.since === undefined || version >= range.since) && (range.until === undefined || version <= range.until);
}

// ── Definitions and references ─────────────────────────────────────────────────────────────────

export const DEFINITIONS = "$defs";

/** Reference to a named definition of the same bundle. */
export const ref = (name: string): Schema => ({ $ref: `#/${DEFINITIONS}/${name}` });

// ── Scalars ────────────────────────────────────────────────────────────────────────────────────

export const MAX_SAFE_INTEGER = Number.MAX_SAFE_INTEGER;

export const str = (extra: Schema = {}): Schema => ({ type: "string", ...extra });

/** Tau's `NonEmpty`: at least one character and not whitespace only. */
export const nonEmpty = (extra: Schema = {}): Schema => ({ type: "string", minLength: 1, pattern: "\\S", ...extra });

/** A single line: no CR or LF. */
export const singleLine = (extra: Schema = {}): Schema => str({ pattern: "^[^\\r\\n]*$", ...extra });

/** No NUL character anywhere. */
export const noNul = (extra: Schema = {}): Schema => str({ pattern: "^[^\\u0000]*$", ...extra });

const BASE64_CHAR = "[A-Za-z0-9+/]";
/**
 * Padded standard base64: groups of four alphabet characters, the last possibly padded. Each group
 * is written as four classes, not as `[…]{4}`: V8 runs a repeated group of fixed width as a loop
 * that keeps no backtracking state per repetition, where the `{4}` form stacks one entry per group
 * and throws RangeError (stack overflow) on a string of a few MiB, well within the message limit.
 * Matching is one pass whatever the string (test/unit/validation.test.ts checks an 8 MiB value).
 */
export const BASE64_PATTERN = `^(?:${BASE64_CHAR.repeat(4)})*(?:${BASE64_CHAR.repeat(2)}==|${BASE64_CHAR.repeat(3)}=)?$`;

/**
 * Padded standard base64. `maxDecodedBytes` becomes the string-length bound 4·ceil(n/3), which is
 * exactly how Tau bounds its decoded sizes.
 */
export const base64 = (opts: { nonEmpty?: boolean; maxDecodedBytes?: number } = {}): Schema =>
  str({
    pattern: BASE64_PATTERN,
    ...(opts.nonEmpty ? { minLength: 4 } : {}),
    ...(opts.maxDecodedBytes !== undefined ? { maxLength: 4 * Math.ceil(opts.maxDecodedBytes / 3) } : {}),
  });

export const int = (opts: { min?: number; max?: number } = {}): Schema => ({
  type: "integer",
  ...(opts.min !== undefined ? { minimum: opts.min } : {}),
  maximum: opts.max ?? MAX_SAFE_INTEGER,
});

export const num = (opts: { min?: number; max?: number } = {}): Schema => ({
  type: "number",
  ...(opts.min !== undefined ? { minimum: opts.min } : {}),
  ...(opts.max !== undefined ? { maximum: opts.max } : {}),
});

export const bool = (): Schema => ({ type: "boolean" });
export const nul = (): Schema => ({ type: "null" });
export const any = (description?: string): Schema => (description ? { description } : {});

/** A single constant; `type` is included so generated TypeScript gets a literal type. */
export const literal = (value: string | number | boolean): Schema => ({ type: typeof value === "string" ? "string" : typeof value === "number" ? "number" : "boolean", const: value });

/** A string enum; members may be {@link Versioned}. */
export const oneOfStrings = (values: ReadonlyArray<string | Versioned<string>>): Schema => ({ type: "string", enum: [...values] });

export const nullable = (schema: Schema): Schema => ({ anyOf: [schema, nul()] });

// ── Composites ─────────────────────────────────────────────────────────────────────────────────

export const arr = (items: unknown, opts: { min?: number; max?: number; unique?: boolean } = {}): Schema => ({
  type: "array",
  items,
  ...(opts.min !== undefined ? { minItems: opts.min } : {}),
  ...(opts.max !== undefined ? { maxItems: opts.max } : {}),
  ...(opts.unique ? { uniqueItems: true } : {}),
});

/** A map with string keys. */
export const record = (values: unknown, opts: { keys?: Schema; max?: number } = {}): Schema => ({
  type: "object",
  additionalProperties: values,
  ...(opts.keys ? { propertyNames: opts.keys } : {}),
  ...(opts.max !== undefined ? { maxProperties: opts.max } : {}),
});

/** A union of alternatives; members may be {@link Versioned}. */
export const union = (...members: unknown[]): Schema => ({ oneOf: members });
/** A union whose members may overlap (first match is fine). */
export const anyOf = (...members: unknown[]): Schema => ({ anyOf: members });

export interface ObjOptions {
  /**
   * `true`: unknown fields are rejected (`additionalProperties: false`). `false` (default):
   * unknown fields are accepted — Tau strips them, Ask ignores them.
   */
  strict?: boolean;
  description?: string;
  /** Extra keywords (e.g. maxProperties) merged into the object schema. */
  extra?: Schema;
}

/**
 * An object schema. Properties are required unless wrapped in {@link opt}; a property wrapped in a
 * {@link Versioned} marker exists only in that range (and is dropped from `required` elsewhere).
 */
export function obj(props: Record<string, unknown>, options: ObjOptions = {}): Schema {
  const properties: Record<string, unknown> = {};
  const required: string[] = [];
  for (const [key, raw] of Object.entries(props)) {
    let value: unknown = raw;
    let optional = false;
    let range: VersionRange | undefined;
    let note: string | undefined;
    for (;;) {
      if (value instanceof Optional) {
        optional = true;
        value = value.value;
      } else if (value instanceof Versioned) {
        range = value.range;
        note = value.note;
        value = value.value;
      } else break;
    }
    properties[key] = range ? new Versioned(range, value, note) : value;
    if (!optional) required.push(key);
  }
  return {
    type: "object",
    ...(options.description ? { description: options.description } : {}),
    properties,
    ...(required.length ? { required } : {}),
    ...(options.strict ? { additionalProperties: false } : {}),
    ...options.extra,
  };
}

/** The same object with a description attached (descriptions are copied into generated docs). */
export const describe = (description: string, schema: Schema): Schema => ({ description, ...schema });

/** A relay's idempotency key (a UUID), as the gateway extensions `tauGatewayRequestKey` take it (src/bridge/request-recall.ts). */
export const REQUEST_KEY_PATTERN = "^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$";
