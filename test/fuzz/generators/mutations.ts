import fc from "fast-check";
import type { FuzzSizes } from "../settings.js";
import { hostileValue } from "./hostile.js";
import { copyJson, Nested, setOwn } from "./json-text.js";

/**
 * Mutations of a valid message: a value somewhere replaced (wrong type, hostile value), a field
 * removed, a field added (envelope names, `__proto__` and friends, random names). Each mutation
 * picks its place by index among the message's nodes, so it stays meaningful as fast-check shrinks
 * the message or the index.
 */

export type Mutation =
  | { kind: "replace"; at: number; value: unknown }
  | { kind: "remove"; at: number }
  | { kind: "add"; at: number; key: string; value: unknown };

const FIELD_NAMES = ["__proto__", "constructor", "prototype", "id", "method", "params", "jsonrpc", "version", "type", "sessionId", "result", "error", "ok"];

export function mutationList(sizes: FuzzSizes): fc.Arbitrary<Mutation[]> {
  const at = fc.nat({ max: 1_000 });
  const mutation: fc.Arbitrary<Mutation> = fc.oneof(
    { weight: 6, arbitrary: fc.record({ kind: fc.constant("replace" as const), at, value: hostileValue(sizes) }) },
    { weight: 2, arbitrary: fc.record({ kind: fc.constant("remove" as const), at }) },
    {
      weight: 2,
      arbitrary: fc.record({
        kind: fc.constant("add" as const),
        at,
        key: fc.oneof(fc.constantFrom(...FIELD_NAMES), fc.string({ maxLength: 8 })),
        value: hostileValue(sizes),
      }),
    },
  );
  return fc.array(mutation, { minLength: 1, maxLength: 3 });
}

type Path = Array<string | number>;

/** Paths of the nodes of `value` (the root included), depth first, at most `limit`; markers and big collections are leaves. */
function nodePaths(value: unknown, limit = 400): Path[] {
  const out: Path[] = [];
  const visit = (node: unknown, path: Path) => {
    if (out.length >= limit) return;
    out.push(path);
    if (node instanceof Nested || typeof node !== "object" || node === null) return;
    if (Array.isArray(node)) {
      if (node.length <= 64) node.forEach((child, i) => visit(child, [...path, i]));
      return;
    }
    const keys = Object.keys(node);
    if (keys.length <= 64) for (const key of keys) visit((node as Record<string, unknown>)[key], [...path, key]);
  };
  visit(value, []);
  return out;
}

function nodeAt(root: unknown, path: Path): unknown {
  let node = root;
  for (const step of path) node = (node as Record<string | number, unknown>)[step];
  return node;
}

/** `message` with the mutations applied in order (the original is left untouched). */
export function applyMutations(message: unknown, mutations: readonly Mutation[]): unknown {
  let root = copyJson(message);
  for (const m of mutations) {
    const paths = nodePaths(root);
    const path = paths[m.at % paths.length]!;
    if (m.kind === "add") {
      // Into the nearest object at or above the chosen node.
      let target = path;
      while (target.length > 0 && !isPlainObject(nodeAt(root, target))) target = target.slice(0, -1);
      const node = nodeAt(root, target);
      if (isPlainObject(node)) setOwn(node, m.key, copyJson(m.value));
      continue;
    }
    if (path.length === 0) {
      if (m.kind === "replace") root = copyJson(m.value);
      continue;
    }
    const parent = nodeAt(root, path.slice(0, -1)) as Record<string | number, unknown> | unknown[];
    const last = path[path.length - 1]!;
    if (m.kind === "replace") {
      if (Array.isArray(parent)) parent[last as number] = copyJson(m.value);
      else setOwn(parent, last as string, copyJson(m.value));
    } else if (Array.isArray(parent)) parent.splice(last as number, 1);
    else delete (parent as Record<string, unknown>)[last as string];
  }
  return root;
}

const isPlainObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v) && !(v instanceof Nested);
