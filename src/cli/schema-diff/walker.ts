import { pinnedValue } from "./bundle-readers.js";
import { admitsAnyValueOf, admitsType, deref, shapeOf, typesOf, type Shape } from "./shape.js";
import type { SchemaNode } from "./surface.js";
import { roleOf, strongest, type Flow, type Impact, type Role, type View } from "./view.js";
import { isObject } from "../../shared/unknown-values.js";
import { escapePointerSegment } from "../../shared/json-pointer.js";

/**
 * One old value schema against its new one, from the viewer's side. What the viewer writes must
 * still be accepted: a new required field, a removed field, a value or type no longer admitted (a
 * narrowed enum) breaks it. What it reads must still be what it understands: a removed field, one
 * no longer always present, a value of a new type (retyped) breaks it. Everything new is a gain
 * for the writer (it may write more) or for the reader (it may be given more).
 *
 * A walker works inside one scope, a method or a shared definition: where both sides name a
 * definition, the walk does not go in but hands the pair to the comparison (`Definitions`), which
 * compares each pair once and remembers where it was reached from.
 */

type Json = Record<string, unknown>;

export interface Finding {
  impact: Impact;
  /** JSON pointer from the scope's root (`*` stands for any key or index). */
  pointer: string;
  /** The union variants it is in, outermost first (`AgentMessageThreadItem`, `mode "show"`). */
  variant: string[];
  message: string;
}

/** The definition a node names, with whether the naming node also admits null. */
export interface NamedDefinition {
  ref: string;
  node: SchemaNode;
  nullable: boolean;
}

/** What a walker asks of the comparison it is part of. */
export interface Definitions {
  readonly view: View;
  readonly oldDocument: Json;
  readonly newDocument: Json;
  /** The definition a node of one side names (a `$ref`, nullable or wrapped in `allOf`), if it is one. */
  named(side: "old" | "new", node: SchemaNode): NamedDefinition | undefined;
  /** The definition an object schema of one side is (by identity), if it is one. */
  definitionRef(side: "old" | "new", node: Json): string | undefined;
  /** Compares a pair of definitions (once), recording that `from` reaches it at `pointer`. */
  reach(oldRef: string, newRef: string, flow: Flow, at: { pointer: string; variant: string[] }): void;
}

const FIELD_MESSAGES = new Set(["removed", "removed: no longer read", "removed: no longer accepted", "new field", "new field, always present", "new optional field", "new required field"]);

export class Walker {
  private readonly compared = new Map<object, Map<object, Set<Flow>>>();
  private sink: (finding: Finding) => void;

  /** `own` is the definition pair this walker compares, if it compares one (it is not handed on again). */
  constructor(
    private readonly definitions: Definitions,
    emit: (finding: Finding) => void,
    private readonly own?: { oldRef: string; newRef: string },
  ) {
    this.sink = emit;
  }

  values(oldNode: SchemaNode, newNode: SchemaNode, flow: Flow, pointer: string, variant: string[]): void {
    const { oldDocument, newDocument } = this.definitions;
    const oldNamed = this.definitions.named("old", oldNode);
    const newNamed = this.definitions.named("new", newNode);
    if (oldNamed && newNamed && !this.isOwn(oldNamed.ref, newNamed.ref)) {
      this.nullability(oldNamed.nullable, newNamed.nullable, flow, pointer, variant);
      return this.definitions.reach(oldNamed.ref, newNamed.ref, flow, { pointer, variant });
    }
    const role = roleOf(flow, this.definitions.view);
    const before = shapeOf(oldDocument, deref(oldDocument, oldNode));
    const after = shapeOf(newDocument, deref(newDocument, newNode));
    if (before.any || after.any) {
      if (role === "writer" && before.any && !after.any) this.report("breaks", pointer, variant, `now restricted to ${list(typesOf(after))}`);
      return;
    }
    this.scalars(before, after, role, pointer, variant);
    if (before.objects.length && after.objects.length) this.objectAlternatives(before.objects, after.objects, flow, pointer, variant);
    if (before.arrays.length && after.arrays.length) {
      const oldItems = itemsOf(before.arrays[0]!);
      const newItems = itemsOf(after.arrays[0]!);
      if (oldItems !== undefined && newItems !== undefined) this.values(oldItems, newItems, flow, `${pointer}/*`, variant);
    }
  }

  private isOwn(oldRef: string, newRef: string): boolean {
    return this.own?.oldRef === oldRef && this.own.newRef === newRef;
  }

  private report(impact: Impact, pointer: string, variant: string[], message: string): void {
    this.sink({ impact, pointer, variant, message });
  }

  /** Null admitted beside a named definition (`anyOf: [{$ref}, {type: null}]`), old against new. */
  private nullability(before: boolean, after: boolean, flow: Flow, pointer: string, variant: string[]): void {
    if (before === after) return;
    const role = roleOf(flow, this.definitions.view);
    if (role === "writer") this.report(before ? "breaks" : "writer-gains", pointer, variant, before ? "no longer accepts null" : "also accepts null");
    else if (after) this.report("breaks", pointer, variant, "may now be null");
  }

  private scalars(before: Shape, after: Shape, role: Role, pointer: string, variant: string[]): void {
    // The giver produces values the taker must admit: the viewer and the new schema when it writes, the new schema and the old one when it reads.
    const [giver, taker] = role === "writer" ? [before, after] : [after, before];
    for (const type of typesOf(giver)) {
      if (!admitsType(taker, type)) {
        const what = role === "writer" ? `no longer accepts ${type === "null" ? "null" : `values of type ${type}`}` : `may now be ${type === "null" ? "null" : `of type ${type}`}`;
        this.report("breaks", pointer, variant, `${what} (retyped: was ${list(typesOf(before))}, now ${list(typesOf(after))})`);
        continue;
      }
      if (type === "object" || type === "array" || admitsAnyValueOf(taker, type)) continue;
      // The taker enumerates this type's values.
      const allowed = taker.values.get(type) ?? new Set<string>();
      if (admitsAnyValueOf(giver, type)) {
        if (role === "writer") this.report("breaks", pointer, variant, `now restricted to ${[...allowed].join(", ")}`);
        else this.report("reader-gains", pointer, variant, `no longer limited to ${[...allowed].join(", ")}`);
        continue;
      }
      const outside = [...(giver.values.get(type) ?? [])].filter((v) => !allowed.has(v));
      if (!outside.length) continue;
      if (role === "writer") this.report("breaks", pointer, variant, `enum narrowed: no longer accepts ${outside.join(", ")}`);
      else this.report("reader-gains", pointer, variant, `may now also be ${outside.join(", ")}`);
    }
    if (role !== "writer") return;
    for (const type of typesOf(after)) {
      if (!admitsType(before, type)) this.report("writer-gains", pointer, variant, `also accepts ${type === "null" ? "null" : `type ${type}`}`);
      else if (!admitsAnyValueOf(before, type) && !admitsAnyValueOf(after, type)) {
        const added = newValues(before, after, type);
        if (added.length) this.report("writer-gains", pointer, variant, `also accepts ${added.join(", ")}`);
      }
    }
  }

  /**
   * Object alternatives: one each side; one against several (each of the several is compared with
   * the one, and what they have in common said once; one object that became a union on a new tag
   * is said in one change); or variants of a union matched by their tag (a property every variant
   * pins: `type`, `kind`…), else by their titles.
   */
  private objectAlternatives(before: Json[], after: Json[], flow: Flow, pointer: string, variant: string[]): void {
    // Against a single object, the several are told apart by their own tag.
    const tag = before.length === 1 ? commonTag(after) : after.length === 1 ? commonTag(before) : commonTag([...before, ...after]);
    const value = (o: Json) => JSON.stringify(pinnedValue(propertiesOf(o)[tag!]));
    const name = (o: Json): string | undefined => (tag ? `${tag} ${value(o)}` : typeof o.title === "string" ? o.title : undefined);
    const within = (o: Json) => [...variant, ...(name(o) === undefined ? [] : [name(o)!])];
    if (before.length === 1 && after.length === 1) return this.object(before[0]!, after[0]!, flow, pointer, variant);
    if (before.length === 1 || after.length === 1) {
      const many = before.length === 1 ? after : before;
      const pair = (o: Json): [Json, Json] => (before.length === 1 ? [before[0]!, o] : [o, after[0]!]);
      const findings = this.collect(() => many.forEach((o) => this.object(...pair(o), flow, pointer, within(o))));
      const names = many.map(name);
      // Variants without a name cannot be told apart: what they find is said as it is.
      if (names.some((n) => n === undefined)) return findings.forEach((f) => this.sink(f));
      const merged = mergeVariants(findings, variant.length, names as string[], tag);
      const becameUnion = before.length === 1 && tag !== undefined && pinnedValue(propertiesOf(before[0]!)[tag]) === undefined;
      if (!becameUnion) return merged.forEach((f) => this.sink(f));
      return this.unionSummary(merged, pointer, variant, tag, after.map(value));
    }
    const named = (objects: Json[]) => new Map(objects.flatMap((o) => (name(o) === undefined ? [] : [[name(o)!, o] as const])));
    const oldVariants = named(before);
    const newVariants = named(after);
    const at = tag ? `${pointer}/${escapePointerSegment(tag)}` : pointer;
    const role = roleOf(flow, this.definitions.view);
    const matched = [...oldVariants.keys()].filter((key) => newVariants.has(key));
    // What differs alike in every variant both sides have is said once.
    const findings = this.collect(() => matched.forEach((key) => this.object(oldVariants.get(key)!, newVariants.get(key)!, flow, pointer, [...variant, key])));
    mergeVariants(findings, variant.length, matched, tag).forEach((f) => this.sink(f));
    for (const key of oldVariants.keys()) if (!newVariants.has(key) && role === "writer") this.report("breaks", at, variant, `variant ${key} no longer accepted`);
    for (const key of newVariants.keys()) if (!oldVariants.has(key)) this.report(role === "writer" ? "writer-gains" : "reader-gains", at, variant, `new variant ${key}`);
  }

  /** What `run` reports, kept back instead of reported. */
  private collect(run: () => void): Finding[] {
    const outer = this.sink;
    const kept: Finding[] = [];
    this.sink = (f) => void kept.push(f);
    try {
      run();
    } finally {
      this.sink = outer;
    }
    return kept;
  }

  /**
   * One object that became a union on a tag it did not have: one change that says so and names the
   * fields gone and new, with the variants they are in; what else differs is said as usual.
   */
  private unionSummary(findings: Finding[], pointer: string, variant: string[], tag: string, values: string[]): void {
    const fieldOf = (f: Finding) => {
      const rest = f.pointer.slice(pointer.length);
      return f.pointer.startsWith(`${pointer}/`) && !rest.slice(1).includes("/") && FIELD_MESSAGES.has(f.message) && f.variant.length <= variant.length + 1 ? rest.slice(1) : undefined;
    };
    const folded = findings.filter((f) => fieldOf(f) !== undefined);
    findings.filter((f) => fieldOf(f) === undefined).forEach((f) => this.sink(f));
    const describe = (f: Finding) => `${fieldOf(f)}${f.variant.length > variant.length ? ` (${f.variant.at(-1)})` : ""}`;
    // Fields of every variant first, then those of some.
    const ordered = [...folded].sort((a, b) => a.variant.length - b.variant.length);
    const removed = ordered.filter((f) => f.message.startsWith("removed")).map(describe);
    const added = ordered.filter((f) => !f.message.startsWith("removed")).map(describe);
    const parts = [removed.length ? `removed ${removed.join(", ")}` : "", added.length ? `new ${added.join(", ")}` : ""].filter(Boolean);
    const impact = strongest(folded.map((f) => f.impact)) ?? "reader-gains";
    this.report(impact, pointer, variant, `now a union on ${tag} (${values.join(", ")}), was one object${parts.length ? `: ${parts.join("; ")}` : ""}`);
  }

  private object(before: Json, after: Json, flow: Flow, pointer: string, variant: string[]): void {
    const oldRef = this.definitions.definitionRef("old", before);
    const newRef = this.definitions.definitionRef("new", after);
    if (oldRef && newRef && !this.isOwn(oldRef, newRef)) return this.definitions.reach(oldRef, newRef, flow, { pointer, variant });
    if (this.seen(before, after, flow)) return;
    const role = roleOf(flow, this.definitions.view);
    const oldProperties = propertiesOf(before);
    const newProperties = propertiesOf(after);
    const oldRequired = requiredOf(before);
    const newRequired = requiredOf(after);
    for (const [name, oldNode] of Object.entries(oldProperties)) {
      const at = `${pointer}/${escapePointerSegment(name)}`;
      const newNode = newProperties[name];
      if (newNode === undefined) {
        if (isForbidden(oldNode)) continue;
        this.report("breaks", at, variant, role === "writer" ? (after.additionalProperties === false ? "removed: no longer accepted" : "removed: no longer read") : "removed");
        continue;
      }
      if (isForbidden(newNode) && !isForbidden(oldNode)) {
        this.report("breaks", at, variant, "removed (now forbidden)");
        continue;
      }
      if (role === "writer" && newRequired.has(name) && !oldRequired.has(name)) this.report("breaks", at, variant, "now required");
      if (role === "reader" && oldRequired.has(name) && !newRequired.has(name)) this.report("breaks", at, variant, "no longer always present");
      this.values(oldNode as SchemaNode, newNode as SchemaNode, flow, at, variant);
    }
    for (const name of Object.keys(newProperties)) {
      if (name in oldProperties || isForbidden(newProperties[name])) continue;
      const at = `${pointer}/${escapePointerSegment(name)}`;
      if (role === "writer") this.report(newRequired.has(name) ? "breaks" : "writer-gains", at, variant, newRequired.has(name) ? "new required field" : "new optional field");
      // A client is told what it may now read; a server what it is now sent, and whether always.
      else if (this.definitions.view === "server") this.report("reader-gains", at, variant, newRequired.has(name) ? "new required field" : "new optional field");
      else this.report("reader-gains", at, variant, newRequired.has(name) ? "new field, always present" : "new field");
    }
    const oldMap = before.additionalProperties;
    const newMap = after.additionalProperties;
    if (isObject(oldMap) && isObject(newMap)) this.values(oldMap, newMap, flow, `${pointer}/*`, variant);
  }

  /** Whether this pair was compared already in this scope (then it is not again: each difference once, recursion ends). */
  private seen(before: SchemaNode, after: SchemaNode, flow: Flow): boolean {
    if (!isObject(before) || !isObject(after)) return false;
    let byNew = this.compared.get(before);
    if (!byNew) this.compared.set(before, (byNew = new Map()));
    let flows = byNew.get(after);
    if (!flows) byNew.set(after, (flows = new Set()));
    if (flows.has(flow)) return true;
    flows.add(flow);
    return false;
  }
}

/**
 * Findings of several variants compared with one object, each said once: the same difference in
 * every variant without a variant, in some of them with those (`mode "show" or "hide"`).
 */
function mergeVariants(findings: Finding[], depth: number, all: string[], tag: string | undefined): Finding[] {
  const groups = new Map<string, { finding: Finding; labels: string[] }>();
  for (const f of findings) {
    const label = f.variant[depth];
    const rest = [...f.variant.slice(0, depth), ...f.variant.slice(depth + 1)];
    const key = JSON.stringify([f.impact, f.pointer, f.message, rest]);
    const group = groups.get(key) ?? { finding: { ...f, variant: rest }, labels: [] };
    if (label !== undefined && !group.labels.includes(label)) group.labels.push(label);
    groups.set(key, group);
  }
  return [...groups.values()].map(({ finding, labels }) => {
    if (!labels.length || all.every((l) => labels.includes(l))) return finding;
    const named = tag ? `${tag} ${labels.map((l) => l.slice(tag.length + 1)).join(" or ")}` : labels.join(" or ");
    const variant = [...finding.variant];
    variant.splice(depth, 0, named);
    return { ...finding, variant };
  });
}

/** A property name every alternative pins to a value (`type`, `kind`, `method`…), preferring `type`. */
function commonTag(all: Json[]): string | undefined {
  const candidates = Object.keys(propertiesOf(all[0]!)).filter((name) => all.every((o) => pinnedValue(propertiesOf(o)[name]) !== undefined));
  return candidates.includes("type") ? "type" : candidates[0];
}

const propertiesOf = (o: Json): Json => (isObject(o.properties) ? o.properties : {});
const requiredOf = (o: Json): Set<string> => new Set(Array.isArray(o.required) ? (o.required as string[]) : []);
const itemsOf = (a: Json): SchemaNode | undefined => (isObject(a.items) || typeof a.items === "boolean" ? (a.items as SchemaNode) : undefined);
/** `false` or `{not: {}}`: a property that must be absent (tau-gateway's `error: false` on success responses). */
const isForbidden = (node: unknown) => node === false || (isObject(node) && isObject(node.not) && Object.keys(node.not).length === 0);
const list = (types: Set<string>) => [...types].join(" or ") || "nothing";

function newValues(before: Shape, after: Shape, type: string): string[] {
  const old = before.values.get(type) ?? new Set<string>();
  return [...(after.values.get(type) ?? [])].filter((v) => !old.has(v));
}
