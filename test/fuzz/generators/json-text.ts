/**
 * Generated messages as JSON text. Deep nesting is kept as a marker and written out as text, so a
 * message can be nested far deeper than JSON.stringify (recursive) can write — JSON.parse on the
 * other side (iterative) reads any depth, and whatever the gateway does with it next is the test.
 * Keys such as `__proto__` are own data properties here, exactly as JSON.parse makes them.
 */

export class Nested {
  constructor(
    readonly shape: "array" | "object" | "mixed",
    readonly depth: number,
    readonly leaf: unknown = "bottom",
  ) {}
}

export function jsonText(value: unknown): string {
  if (value instanceof Nested) {
    let open = "";
    let close = "";
    for (let i = 0; i < value.depth; i++) {
      const asArray = value.shape === "array" || (value.shape === "mixed" && i % 2 === 0);
      open += asArray ? "[" : '{"a":';
      close = (asArray ? "]" : "}") + close;
    }
    return open + jsonText(value.leaf) + close;
  }
  if (Array.isArray(value)) return `[${value.map(jsonText).join(",")}]`;
  if (typeof value === "object" && value !== null) {
    return `{${Object.keys(value)
      .map((k) => `${JSON.stringify(k)}:${jsonText((value as Record<string, unknown>)[k])}`)
      .join(",")}}`;
  }
  return JSON.stringify(value) ?? "null";
}

/** Sets an own data property, even for `__proto__` (plain assignment would change the prototype). */
export function setOwn(target: Record<string, unknown>, key: string, value: unknown): void {
  Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
}

/** A deep copy that keeps own `__proto__` keys as keys (markers are immutable and shared). */
export function copyJson<T>(value: T): T {
  if (value instanceof Nested || typeof value !== "object" || value === null) return value;
  if (Array.isArray(value)) return value.map(copyJson) as T;
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(value)) setOwn(out, key, copyJson((value as Record<string, unknown>)[key]));
  return out as T;
}

/** A short, readable rendering for failure reports: long strings and deep nesting abbreviated. */
export function describeValue(value: unknown, budget = 1_500): string {
  const text = jsonText(abbreviate(value));
  return text.length > budget ? `${text.slice(0, budget)}… (${text.length} chars)` : text;
}

function abbreviate(value: unknown): unknown {
  if (value instanceof Nested) return `⟪${value.shape} nested ${value.depth} levels⟫`;
  if (typeof value === "string") {
    if (value.length <= 200) return value;
    const unit = value[0]!;
    const run = value.length - value.replace(new RegExp(`^(?:${escapeRegExp(unit)})+`, "u"), "").length;
    return run > 100 ? `⟪${JSON.stringify(unit)}×${run}⟫${value.slice(run, run + 100)}` : `${value.slice(0, 200)}⟪…${value.length} chars⟫`;
  }
  if (Array.isArray(value)) return value.length > 50 ? [...value.slice(0, 20).map(abbreviate), `⟪${value.length} items⟫`] : value.map(abbreviate);
  if (typeof value === "object" && value !== null) {
    const keys = Object.keys(value);
    const out: Record<string, unknown> = {};
    for (const key of keys.slice(0, 50)) setOwn(out, key, abbreviate((value as Record<string, unknown>)[key]));
    if (keys.length > 50) setOwn(out, "⟪more⟫", `${keys.length} keys`);
    return out;
  }
  return value;
}

const escapeRegExp = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
