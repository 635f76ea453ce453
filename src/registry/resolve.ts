import { inRange, Optional, ProtocolVersionConst, Variants, Versioned, type Schema } from "./schema.js";

/**
 * Resolves the version markers of a registry tree for one protocol version, producing plain JSON
 * Schema: out-of-range properties, union members and enum values are dropped, variants are picked,
 * and the protocol-version placeholder becomes a constant. Dialects without numbered versions (Ask)
 * pass `undefined`, and any marker found there is a registry bug.
 */
export function resolveForVersion<T>(value: T, version: number | undefined): T {
  return walk(value, version) as T;
}

function walk(value: unknown, version: number | undefined): unknown {
  if (value instanceof ProtocolVersionConst) {
    if (version === undefined) throw new Error("protocol version placeholder used in an unversioned dialect");
    return { type: "integer", const: version };
  }
  if (value instanceof Variants) {
    const chosen = value.variants.find((v) => matches(v, version));
    if (!chosen) throw new Error(`no variant for version ${version}`);
    return walk(chosen.value, version);
  }
  if (value instanceof Versioned) {
    // A bare Versioned outside an array/properties map: keep it when in range.
    if (!matches(value, version)) throw new Error(`value not present in version ${version} used where it cannot be dropped`);
    return walk(value.value, version);
  }
  if (value instanceof Optional) throw new Error("opt() used outside obj()");
  if (Array.isArray(value)) {
    const out: unknown[] = [];
    for (const item of value) {
      if (item instanceof Versioned && !matches(item, version)) continue;
      out.push(walk(item, version));
    }
    return out;
  }
  if (value !== null && typeof value === "object") {
    const src = value as Schema;
    const out: Schema = {};
    const dropped = new Set<string>();
    for (const [key, child] of Object.entries(src)) {
      if (key === "properties" && child && typeof child === "object") {
        const props: Schema = {};
        for (const [name, prop] of Object.entries(child as Schema)) {
          if (prop instanceof Versioned && !matches(prop, version)) {
            dropped.add(name);
            continue;
          }
          props[name] = walk(prop, version);
        }
        out[key] = props;
      } else {
        out[key] = walk(child, version);
      }
    }
    if (Array.isArray(out.required) && dropped.size) {
      out.required = (out.required as string[]).filter((k) => !dropped.has(k));
      if ((out.required as string[]).length === 0) delete out.required;
    }
    return out;
  }
  return value;
}

function matches(marker: Versioned, version: number | undefined): boolean {
  if (version === undefined) throw new Error("version marker used in an unversioned dialect");
  return inRange(marker.range, version);
}
