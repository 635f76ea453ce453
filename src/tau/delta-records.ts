/**
 * Helpers for the snapshot's id-keyed records (`turns`, `tools`, `operations`, `agents`, `facets`).
 * Ids come off the wire, so a key may be `__proto__` or `constructor`: plain `map[id]` reads would
 * see Object.prototype and writes to `__proto__` would replace the prototype. Every access goes
 * through own-property operations instead.
 */

export type IdRecord<V> = { [id: string]: V };

export const hasId = (map: IdRecord<unknown>, id: string): boolean => Object.hasOwn(map, id);

export const getById = <V>(map: IdRecord<V>, id: string): V | undefined =>
  Object.hasOwn(map, id) ? map[id] : undefined;

export function setById<V>(map: IdRecord<V>, id: string, value: V): void {
  Object.defineProperty(map, id, { value, enumerable: true, writable: true, configurable: true });
}

export function deleteById(map: IdRecord<unknown>, id: string): void {
  delete map[id];
}

/** Structural equality of JSON values (key order ignored), for "did this record change?". */
export function sameJson(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== "object" || typeof b !== "object" || a === null || b === null) return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a)) {
    const other = b as unknown[];
    return a.length === other.length && a.every((item, i) => sameJson(item, other[i]));
  }
  const left = a as Record<string, unknown>;
  const right = b as Record<string, unknown>;
  const keys = Object.keys(left).filter((k) => left[k] !== undefined);
  const otherKeys = Object.keys(right).filter((k) => right[k] !== undefined);
  return keys.length === otherKeys.length && keys.every((k) => Object.hasOwn(right, k) && sameJson(left[k], right[k]));
}
