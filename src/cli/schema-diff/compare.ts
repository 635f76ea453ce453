import { resolvePointer } from "./bundle-readers.js";
import { clientSends, type MethodKind, type SchemaNode, type Surface, type SurfaceMethod } from "./surface.js";
import { methodSeverity, type Flow, type Severity, type View } from "./view.js";
import { Walker, type Definitions, type Finding, type NamedDefinition } from "./walker.js";
import { isObject } from "../../shared/unknown-values.js";

/**
 * Two surfaces compared: every method in both, its params and result (walker.ts says how two
 * value schemas are compared). A definition both sides name (`$ref`) is compared once, in its own
 * scope, whichever methods reach it: a change to a shared type is one change, reaching many
 * methods (report.ts says them). What is added and removed is said per method.
 */

type Json = Record<string, unknown>;

/** Where findings are made: one method, or one shared definition (compared once for each way it travels). */
export interface Scope {
  method?: SurfaceMethod;
  /** The definition's name, for a definition scope. */
  definition?: string;
  findings: Finding[];
  /** Where the definition is reached from: a method scope, or another definition's. */
  incoming: Array<{ from: Scope; pointer: string; variant: string[] }>;
}

export interface MethodChange {
  severity: Severity;
  kind: MethodKind;
  method: string;
  message: string;
}

export interface Warning {
  /** The method it is about, when it is about one (the `--methods` filter applies). */
  method?: string;
  text: string;
}

export interface Comparison {
  view: View;
  methodChanges: MethodChange[];
  scopes: Scope[];
  warnings: Warning[];
}

const KIND_NAMES: Record<MethodKind, string> = { request: "request", notification: "notification", "server-request": "server request", "server-notification": "server notification" };
export const describeKind = (kind: MethodKind) => KIND_NAMES[kind];
const hasResult = (kind: MethodKind) => kind === "request" || kind === "server-request";

export function compareSurfaces(before: Surface, after: Surface, view: View = "client"): Comparison {
  const engine = new Engine(before, after, view);
  const methodChanges: MethodChange[] = [];
  const warnings: Warning[] = [...before.warnings.map((w) => ({ ...w, text: `OLD: ${w.text}` })), ...after.warnings.map((w) => ({ ...w, text: `NEW: ${w.text}` }))];
  for (const [key, old] of before.methods) {
    const current = after.methods.get(key);
    if (!current) {
      methodChanges.push({ severity: methodSeverity(old.kind, "removed", view), kind: old.kind, method: old.name, message: `${describeKind(old.kind)} removed` });
      continue;
    }
    engine.method(old, current);
    if (hasResult(old.kind) && (old.result === undefined || current.result === undefined)) {
      const where = old.result === undefined && current.result === undefined ? "either bundle" : old.result === undefined ? "OLD" : "NEW";
      warnings.push({ method: old.name, text: `${describeKind(old.kind)} ${old.name}: no result definition found in ${where}, so its result is not compared` });
    }
  }
  for (const [key, added] of after.methods) {
    if (before.methods.has(key)) continue;
    const unknownResult = hasResult(added.kind) && added.result === undefined ? " (NEW names no result definition for it)" : "";
    methodChanges.push({ severity: methodSeverity(added.kind, "added", view), kind: added.kind, method: added.name, message: `new ${describeKind(added.kind)}${unknownResult}` });
  }
  return { view, methodChanges, scopes: engine.scopes, warnings };
}

class Engine {
  readonly scopes: Scope[] = [];
  private readonly definitionScopes = new Map<string, Scope>();
  private readonly definitionIndex: Record<"old" | "new", Map<object, string> | undefined> = { old: undefined, new: undefined };

  constructor(
    private readonly before: Surface,
    private readonly after: Surface,
    private readonly view: View,
  ) {}

  method(old: SurfaceMethod, current: SurfaceMethod): void {
    const scope = this.scope({ method: old });
    const walker = new Walker(this.definitionsFor(scope), (f) => emit(scope, f));
    const paramsFlow: Flow = clientSends(old.kind) ? "sent" : "received";
    // A Tau server message's "params" is the whole message.
    const paramsPointer = old.kind === "server-notification" && old.params !== undefined && isMessage(old.params) ? "" : "/params";
    if (old.params !== undefined && current.params !== undefined) walker.values(old.params, current.params, paramsFlow, paramsPointer, []);
    if (old.result !== undefined && current.result !== undefined) walker.values(old.result, current.result, paramsFlow === "sent" ? "received" : "sent", "/result", []);
    const oldEnvelope = this.before.envelopes.get(old.kind);
    const newEnvelope = this.after.envelopes.get(old.kind);
    if (oldEnvelope && newEnvelope) this.envelope(old.kind, oldEnvelope, newEnvelope, paramsFlow).incoming.push({ from: scope, pointer: "", variant: [] });
  }

  private scope(of: { method?: SurfaceMethod; definition?: string }): Scope {
    const scope: Scope = { ...of, findings: [], incoming: [] };
    this.scopes.push(scope);
    return scope;
  }

  /** What every message of a kind carries beside its params, compared once for all of them. */
  private envelope(kind: MethodKind, before: { name: string; schema: SchemaNode }, after: { name: string; schema: SchemaNode }, flow: Flow): Scope {
    const key = `envelope ${kind}`;
    let scope = this.definitionScopes.get(key);
    if (!scope) {
      this.definitionScopes.set(key, (scope = this.scope({ definition: after.name })));
      const target = scope;
      new Walker(this.definitionsFor(target), (f) => emit(target, f)).values(before.schema, after.schema, flow, "", []);
    }
    return scope;
  }

  private definitionsFor(scope: Scope): Definitions {
    return {
      view: this.view,
      oldDocument: this.before.document,
      newDocument: this.after.document,
      named: (side, node) => this.named(side, node),
      definitionRef: (side, node) => this.index(side).get(node),
      reach: (oldRef, newRef, flow, at) => this.reach(oldRef, newRef, flow).incoming.push({ from: scope, ...at }),
    };
  }

  private reach(oldRef: string, newRef: string, flow: Flow): Scope {
    const key = `${oldRef} ${newRef} ${flow}`;
    let scope = this.definitionScopes.get(key);
    if (scope) return scope;
    const oldName = lastSegment(oldRef);
    const newName = lastSegment(newRef);
    scope = this.scope({ definition: oldName === newName ? newName : `${newName} (was ${oldName})` });
    this.definitionScopes.set(key, scope);
    const target = scope;
    const walker = new Walker(this.definitionsFor(target), (f) => emit(target, f), { oldRef, newRef });
    walker.values(resolvePointer(this.before.document, oldRef)!, resolvePointer(this.after.document, newRef)!, flow, "", []);
    return scope;
  }

  /** The definition a node names: a local `$ref` to one, that `$ref` beside `{type: null}` in a union, or alone in an `allOf`. */
  private named(side: "old" | "new", node: SchemaNode): NamedDefinition | undefined {
    if (!isObject(node)) return undefined;
    const document = side === "old" ? this.before.document : this.after.document;
    if (typeof node.$ref === "string") {
      const target = DEFINITION_REF.test(node.$ref) ? resolvePointer(document, node.$ref) : undefined;
      return target === undefined ? undefined : { ref: node.$ref, node: target, nullable: false };
    }
    const union = [node.anyOf, node.oneOf].find(Array.isArray) as unknown[] | undefined;
    if (union?.length === 2 && !hasOwnShape(node)) {
      const rest = union.filter((n) => !isNullOnly(n));
      const named = rest.length === 1 ? this.named(side, rest[0] as SchemaNode) : undefined;
      return named && !named.nullable ? { ...named, nullable: true } : undefined;
    }
    if (Array.isArray(node.allOf) && node.allOf.length === 1 && !hasOwnShape(node)) return this.named(side, node.allOf[0] as SchemaNode);
    return undefined;
  }

  /** Each definition of a document by identity, so an object reached by flattening a union is still known as the definition it is. */
  private index(side: "old" | "new"): Map<object, string> {
    let index = this.definitionIndex[side];
    if (index) return index;
    index = new Map();
    const document = side === "old" ? this.before.document : this.after.document;
    const add = (container: unknown, base: string) => {
      if (!isObject(container)) return;
      for (const [name, node] of Object.entries(container)) if (isObject(node)) index!.set(node, `${base}/${name.replace(/~/g, "~0").replace(/\//g, "~1")}`);
    };
    add(document.$defs, "#/$defs");
    add(document.definitions, "#/definitions");
    if (isObject(document.definitions)) add(document.definitions.v2, "#/definitions/v2");
    this.definitionIndex[side] = index;
    return index;
  }
}

const DEFINITION_REF = /^#\/(definitions|\$defs)\//;
const lastSegment = (ref: string) => ref.split("/").pop()!;
const isNullOnly = (node: unknown) => isObject(node) && node.type === "null" && !("enum" in node) && !("const" in node);
/** Whether a wrapper says more than which definition it names (then it is compared as it is). */
const hasOwnShape = (node: Json) => ["properties", "required", "type", "enum", "const", "items", "additionalProperties"].some((k) => k in node);
const isMessage = (node: SchemaNode) => isObject(node) && isObject(node.properties) && "type" in node.properties && "version" in node.properties;

const emitted = new WeakMap<Scope, Set<string>>();

/** A finding kept once per scope (a shared definition under two variants of one method says it once). */
function emit(scope: Scope, finding: Finding): void {
  let keys = emitted.get(scope);
  if (!keys) emitted.set(scope, (keys = new Set()));
  const key = JSON.stringify([finding.impact, finding.pointer, finding.message, finding.variant]);
  if (keys.has(key)) return;
  keys.add(key);
  scope.findings.push(finding);
}
