import { resolvePointer } from "./bundle-readers.js";
import type { SchemaNode } from "./surface.js";
import { isObject } from "../../shared/unknown-values.js";

/**
 * What a schema node admits, flattened for comparison: unions, `$ref`s and `allOf` wrappers are
 * read through, so `anyOf: [{$ref: Mode}, {type: null}]` and `type: ["string", "null"], enum: […]`
 * look alike. Scalars are per JSON type, either free (any value) or enumerated; object and array
 * alternatives are kept as their schemas, to be compared property by property.
 */
export interface Shape {
  /** Admits anything (`true`, `{}`, a description alone). */
  any: boolean;
  /** JSON types admitted with any value ("null" included). */
  free: Set<string>;
  /** JSON types admitted only with these values (as JSON text). */
  values: Map<string, Set<string>>;
  objects: Json[];
  arrays: Json[];
}

type Json = Record<string, unknown>;

const SCALAR_TYPES = new Set(["null", "boolean", "integer", "number", "string"]);

/** The node a `$ref` chain ends at (the node itself when it is no reference). */
export function deref(document: Json, node: SchemaNode, depth = 0): SchemaNode {
  if (depth > 32 || !isObject(node) || typeof node.$ref !== "string") return node;
  const target = resolvePointer(document, node.$ref);
  return target === undefined ? node : deref(document, target, depth + 1);
}

export function shapeOf(document: Json, node: SchemaNode): Shape {
  const shape: Shape = { any: false, free: new Set(), values: new Map(), objects: [], arrays: [] };
  collect(document, node, shape, 0);
  return shape;
}

function collect(document: Json, raw: SchemaNode, shape: Shape, depth: number): void {
  if (depth > 32) return;
  const node = deref(document, raw);
  if (node === true) return void (shape.any = true);
  if (node === false || !isObject(node)) return;
  const alternatives = [...(Array.isArray(node.anyOf) ? node.anyOf : []), ...(Array.isArray(node.oneOf) ? node.oneOf : [])];
  if (alternatives.length) {
    const inner: Shape = { any: false, free: new Set(), values: new Map(), objects: [], arrays: [] };
    for (const alternative of alternatives) collect(document, alternative as SchemaNode, inner, depth + 1);
    // Keywords beside the union apply to every alternative: properties standing next to a `oneOf`
    // (Codex's ThreadItem.startedAtMs, ThreadRealtimeItem.observedAtMs) belong to each variant.
    if (hasObjectKeywords(node)) inner.objects = inner.objects.map((o) => withSharedProperties(node, o));
    return merge(shape, inner);
  }
  if (Array.isArray(node.allOf) && node.allOf.length) return collectAll(document, node, shape, depth);
  if ("const" in node) return addValue(shape, node.const);
  if (Array.isArray(node.enum)) return node.enum.forEach((v) => addValue(shape, v));
  const types = typeof node.type === "string" ? [node.type] : Array.isArray(node.type) ? (node.type as string[]) : [];
  if (!types.length) {
    if (isObject(node.properties) || "additionalProperties" in node || Array.isArray(node.required)) shape.objects.push(node);
    else if ("items" in node) shape.arrays.push(node);
    else shape.any = true;
    return;
  }
  for (const type of types) {
    if (type === "object") shape.objects.push(node);
    else if (type === "array") shape.arrays.push(node);
    else if (SCALAR_TYPES.has(type)) shape.free.add(type);
  }
}

const hasObjectKeywords = (node: Json) => isObject(node.properties) || Array.isArray(node.required);

/**
 * An alternative with the properties and required fields of the union it is in. The same pair
 * gives the same object every time: comparisons remember the pairs they compared by identity, and
 * that is how a recursive type ends.
 */
const sharedCache = new WeakMap<Json, WeakMap<Json, Json>>();
function withSharedProperties(union: Json, alternative: Json): Json {
  let byAlternative = sharedCache.get(union);
  if (!byAlternative) sharedCache.set(union, (byAlternative = new WeakMap()));
  let merged = byAlternative.get(alternative);
  if (!merged) {
    const required = new Set([...(Array.isArray(union.required) ? (union.required as string[]) : []), ...(Array.isArray(alternative.required) ? (alternative.required as string[]) : [])]);
    merged = {
      ...alternative,
      properties: { ...(isObject(union.properties) ? union.properties : {}), ...(isObject(alternative.properties) ? alternative.properties : {}) },
      required: [...required],
    };
    if (alternative.additionalProperties === undefined && union.additionalProperties !== undefined) merged.additionalProperties = union.additionalProperties;
    byAlternative.set(alternative, merged);
  }
  return merged;
}

/**
 * `allOf`: a wrapper around one schema (ACP's `allOf: [{$ref}]` with a description) is read as that
 * schema; several object schemas are merged into one (their properties and required fields).
 */
function collectAll(document: Json, node: Json, shape: Shape, depth: number): void {
  const parts = [{ ...node, allOf: undefined }, ...(node.allOf as SchemaNode[])].map((part) => shapeOf(document, deref(document, part)));
  const meaningful = parts.filter((p) => !p.any || p.objects.length || p.arrays.length || p.free.size || p.values.size);
  if (meaningful.length === 1) return merge(shape, meaningful[0]!);
  const objects = meaningful.flatMap((p) => p.objects);
  if (objects.length) {
    const properties: Json = {};
    const required = new Set<string>();
    for (const o of objects) {
      Object.assign(properties, isObject(o.properties) ? o.properties : {});
      (Array.isArray(o.required) ? (o.required as string[]) : []).forEach((r) => required.add(r));
    }
    shape.objects.push({ type: "object", properties, required: [...required] });
    return;
  }
  for (const part of meaningful) merge(shape, part);
  void depth;
}

function merge(into: Shape, from: Shape): void {
  into.any ||= from.any;
  from.free.forEach((t) => into.free.add(t));
  for (const [type, values] of from.values) values.forEach((v) => addText(into, type, v));
  into.objects.push(...from.objects);
  into.arrays.push(...from.arrays);
}

function addValue(shape: Shape, value: unknown): void {
  addText(shape, jsonType(value), JSON.stringify(value));
}

function addText(shape: Shape, type: string, text: string): void {
  if (type === "object" || type === "array") return void (shape.any = true);
  let values = shape.values.get(type);
  if (!values) shape.values.set(type, (values = new Set()));
  values.add(text);
}

function jsonType(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "array";
  if (typeof value === "number") return Number.isInteger(value) ? "integer" : "number";
  return typeof value;
}

/** The JSON types a shape admits, any value or some ("object"/"array" when it has such alternatives). */
export function typesOf(shape: Shape): Set<string> {
  const types = new Set([...shape.free, ...shape.values.keys()]);
  if (shape.objects.length) types.add("object");
  if (shape.arrays.length) types.add("array");
  return types;
}

/** Whether a shape admits values of a JSON type at all (an integer is a number). */
export function admitsType(shape: Shape, type: string): boolean {
  if (shape.any) return true;
  const types = typesOf(shape);
  return types.has(type) || (type === "integer" && types.has("number"));
}

/** Whether a shape admits every value of a type (not only enumerated ones). */
export function admitsAnyValueOf(shape: Shape, type: string): boolean {
  return shape.any || shape.free.has(type) || (type === "integer" && shape.free.has("number"));
}
