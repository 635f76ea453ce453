import { pinnedValue } from "./bundle-readers.js";
import { admitsAnyValueOf, admitsType, deref, shapeOf, typesOf, type Shape } from "./shape.js";
import { clientSends, methodKey, type MethodKind, type SchemaNode, type Surface, type SurfaceMethod } from "./surface.js";
import { isObject } from "../../shared/unknown-values.js";
import { escapePointerSegment } from "../../shared/json-pointer.js";

/**
 * Two surfaces compared from a client's point of view. What the client sends (its requests' and
 * notifications' params, its answers to server requests) must still be accepted: a new required
 * field, a removed field, a value or type no longer admitted (a narrowed enum) breaks it. What it
 * receives (results, server notifications, server requests' params) must still be what it reads: a
 * removed field, a field no longer always present, a value of a new type (retyped) breaks it.
 * Removed methods and notifications break it. Everything new is additive.
 */

export type Severity = "breaking" | "additive";

export interface SchemaChange {
  severity: Severity;
  kind: MethodKind;
  method: string;
  /** JSON pointer into the message (`/params/cwd`, `/result/thread/status`; `*` stands for any key or index). */
  pointer: string;
  message: string;
}

/** Whether a value travels from the client (must be accepted) or to it (must be understood). */
type Flow = "sent" | "received";

type Json = Record<string, unknown>;

const KIND_ORDER: MethodKind[] = ["request", "notification", "server-request", "server-notification"];

export function compareSurfaces(before: Surface, after: Surface): SchemaChange[] {
  const changes: SchemaChange[] = [];
  for (const [key, old] of before.methods) {
    const current = after.methods.get(key);
    if (!current) {
      changes.push({ severity: "breaking", kind: old.kind, method: old.name, pointer: "", message: `${describeKind(old.kind)} removed` });
      continue;
    }
    new MethodComparison(before.document, after.document, old, changes).run(current);
  }
  for (const [key, added] of after.methods) {
    if (!before.methods.has(key)) changes.push({ severity: "additive", kind: added.kind, method: added.name, pointer: "", message: `new ${describeKind(added.kind)}` });
  }
  return changes.sort((a, b) => KIND_ORDER.indexOf(a.kind) - KIND_ORDER.indexOf(b.kind) || a.method.localeCompare(b.method) || a.pointer.localeCompare(b.pointer));
}

const describeKind = (kind: MethodKind) =>
  ({ request: "request", notification: "notification", "server-request": "server request", "server-notification": "server notification" })[kind];

/** One method's params and result, old against new; each pair of definitions is compared once per method (recursive types end). */
class MethodComparison {
  private readonly compared = new Map<object, Map<object, Set<Flow>>>();
  private readonly reported = new Set<string>();

  constructor(
    private readonly oldDocument: Json,
    private readonly newDocument: Json,
    private readonly old: SurfaceMethod,
    private readonly changes: SchemaChange[],
  ) {}

  run(current: SurfaceMethod): void {
    const paramsFlow: Flow = clientSends(this.old.kind) ? "sent" : "received";
    // A Tau server message's "params" is the whole message.
    const paramsPointer = this.old.kind === "server-notification" && this.old.params !== undefined && isMessage(this.old.params) ? "" : "/params";
    if (this.old.params !== undefined && current.params !== undefined) this.values(this.old.params, current.params, paramsFlow, paramsPointer, "");
    if (this.old.result !== undefined && current.result !== undefined) this.values(this.old.result, current.result, paramsFlow === "sent" ? "received" : "sent", "/result", "");
  }

  private report(severity: Severity, pointer: string, variant: string, message: string): void {
    const change: SchemaChange = { severity, kind: this.old.kind, method: this.old.name, pointer, message: variant ? `${message} (${variant})` : message };
    // The same difference reached twice (a shared definition under two variants) is said once.
    const key = `${severity} ${pointer} ${change.message}`;
    if (this.reported.has(key)) return;
    this.reported.add(key);
    this.changes.push(change);
  }

  private values(oldNode: SchemaNode, newNode: SchemaNode, flow: Flow, pointer: string, variant: string): void {
    const before = shapeOf(this.oldDocument, deref(this.oldDocument, oldNode));
    const after = shapeOf(this.newDocument, deref(this.newDocument, newNode));
    if (before.any || after.any) {
      if (flow === "sent" && before.any && !after.any) this.report("breaking", pointer, variant, `now restricted to ${list(typesOf(after))}`);
      return;
    }
    this.scalars(before, after, flow, pointer, variant);
    if (before.objects.length && after.objects.length) this.objectAlternatives(before.objects, after.objects, flow, pointer, variant);
    if (before.arrays.length && after.arrays.length) {
      const oldItems = itemsOf(before.arrays[0]!);
      const newItems = itemsOf(after.arrays[0]!);
      if (oldItems !== undefined && newItems !== undefined) this.values(oldItems, newItems, flow, `${pointer}/*`, variant);
    }
  }

  private scalars(before: Shape, after: Shape, flow: Flow, pointer: string, variant: string): void {
    // The giver produces values the taker must admit: the client and the new schema when it sends, the new schema and the old one when it receives.
    const [giver, taker] = flow === "sent" ? [before, after] : [after, before];
    for (const type of typesOf(giver)) {
      if (!admitsType(taker, type)) {
        const what = flow === "sent" ? `no longer accepts ${type === "null" ? "null" : `values of type ${type}`}` : `may now be ${type === "null" ? "null" : `of type ${type}`}`;
        this.report("breaking", pointer, variant, `${what} (retyped: was ${list(typesOf(before))}, now ${list(typesOf(after))})`);
        continue;
      }
      if (type === "object" || type === "array" || admitsAnyValueOf(taker, type)) continue;
      // The taker enumerates this type's values.
      const allowed = taker.values.get(type) ?? new Set<string>();
      if (admitsAnyValueOf(giver, type)) {
        if (flow === "sent") this.report("breaking", pointer, variant, `now restricted to ${[...allowed].join(", ")}`);
        else this.report("additive", pointer, variant, `no longer limited to ${[...allowed].join(", ")}`);
        continue;
      }
      const outside = [...(giver.values.get(type) ?? [])].filter((v) => !allowed.has(v));
      if (!outside.length) continue;
      if (flow === "sent") this.report("breaking", pointer, variant, `enum narrowed: no longer accepts ${outside.join(", ")}`);
      else this.report("additive", pointer, variant, `may now also be ${outside.join(", ")}`);
    }
    if (flow !== "sent") return;
    for (const type of typesOf(after)) {
      if (!admitsType(before, type)) this.report("additive", pointer, variant, `also accepts ${type === "null" ? "null" : `type ${type}`}`);
      else if (!admitsAnyValueOf(before, type) && !admitsAnyValueOf(after, type)) {
        const added = newValues(before, after, type);
        if (added.length) this.report("additive", pointer, variant, `also accepts ${added.join(", ")}`);
      }
    }
  }

  /**
   * Object alternatives: one each side; one against several (each of the several is compared with
   * the one: a client reading a value may get any of them); or variants of a union matched by their
   * tag (a property every variant pins: `type`, `kind`…), else by their titles.
   */
  private objectAlternatives(before: Json[], after: Json[], flow: Flow, pointer: string, variant: string): void {
    // Against a single object, the several are told apart by their own tag.
    const tag = before.length === 1 ? commonTag(after) : after.length === 1 ? commonTag(before) : commonTag([...before, ...after]);
    const name = (o: Json): string | undefined => (tag ? `${tag} ${JSON.stringify(pinnedValue(propertiesOf(o)[tag]))}` : typeof o.title === "string" ? o.title : undefined);
    const within = (o: Json) => [variant, name(o)].filter(Boolean).join(", ");
    if (before.length === 1 && after.length === 1) return this.object(before[0]!, after[0]!, flow, pointer, variant);
    if (before.length === 1) return after.forEach((n) => this.object(before[0]!, n, flow, pointer, within(n)));
    if (after.length === 1) return before.forEach((o) => this.object(o, after[0]!, flow, pointer, within(o)));
    const named = (objects: Json[]) => new Map(objects.flatMap((o) => (name(o) === undefined ? [] : [[name(o)!, o] as const])));
    const oldVariants = named(before);
    const newVariants = named(after);
    const at = tag ? `${pointer}/${escapePointerSegment(tag)}` : pointer;
    for (const [key, o] of oldVariants) {
      const n = newVariants.get(key);
      if (n) this.object(o, n, flow, pointer, within(o));
      else if (flow === "sent") this.report("breaking", at, variant, `variant ${key} no longer accepted`);
    }
    for (const key of newVariants.keys()) if (!oldVariants.has(key)) this.report("additive", at, variant, `new variant ${key}`);
  }

  private object(before: Json, after: Json, flow: Flow, pointer: string, variant: string): void {
    if (this.seen(before, after, flow)) return;
    const oldProperties = propertiesOf(before);
    const newProperties = propertiesOf(after);
    const oldRequired = requiredOf(before);
    const newRequired = requiredOf(after);
    for (const [name, oldNode] of Object.entries(oldProperties)) {
      const at = `${pointer}/${escapePointerSegment(name)}`;
      const newNode = newProperties[name];
      if (newNode === undefined) {
        if (isForbidden(oldNode)) continue;
        this.report("breaking", at, variant, flow === "sent" ? (after.additionalProperties === false ? "removed: no longer accepted" : "removed: no longer read") : "removed");
        continue;
      }
      if (isForbidden(newNode) && !isForbidden(oldNode)) {
        this.report("breaking", at, variant, "removed (now forbidden)");
        continue;
      }
      if (flow === "sent" && newRequired.has(name) && !oldRequired.has(name)) this.report("breaking", at, variant, "now required");
      if (flow === "received" && oldRequired.has(name) && !newRequired.has(name)) this.report("breaking", at, variant, "no longer always present");
      this.values(oldNode as SchemaNode, newNode as SchemaNode, flow, at, variant);
    }
    for (const name of Object.keys(newProperties)) {
      if (name in oldProperties || isForbidden(newProperties[name])) continue;
      const at = `${pointer}/${escapePointerSegment(name)}`;
      if (flow === "sent" && newRequired.has(name)) this.report("breaking", at, variant, "new required field");
      else this.report("additive", at, variant, flow === "sent" ? "new optional field" : "new field");
    }
    const oldMap = before.additionalProperties;
    const newMap = after.additionalProperties;
    if (isObject(oldMap) && isObject(newMap)) this.values(oldMap, newMap, flow, `${pointer}/*`, variant);
  }

  /** Whether this pair was compared already for this method (then it is not again: each difference once, recursion ends). */
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
const isMessage = (node: SchemaNode) => isObject(node) && isObject(node.properties) && "type" in node.properties && "version" in node.properties;
const list = (types: Set<string>) => [...types].join(" or ") || "nothing";

function newValues(before: Shape, after: Shape, type: string): string[] {
  const old = before.values.get(type) ?? new Set<string>();
  return [...(after.values.get(type) ?? [])].filter((v) => !old.has(v));
}
