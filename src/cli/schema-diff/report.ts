import type { Comparison, Scope } from "./compare.js";
import { describeKind } from "./compare.js";
import type { MethodKind } from "./surface.js";
import { fails, SEVERITIES, severityOf, type Severity, type View } from "./view.js";
import type { Finding } from "./walker.js";

/**
 * The changes of a comparison, as `schema diff` prints them. A change inside a method's own
 * schema is said for that method and a pointer into its message. A change inside a shared
 * definition is said once: for the method and full pointer when one method reaches it, else for
 * the definition, with every method that reaches it. `methods` limits all of it to the methods a
 * server serves.
 */

export interface Reach {
  kind: MethodKind;
  method: string;
  /** Pointer into the message, to the definition. */
  pointer: string;
}

export interface SchemaChange {
  severity: Severity;
  /** The method, for a change said for one. */
  kind?: MethodKind;
  method?: string;
  /** The shared definition, for a change said for several methods. */
  definition?: string;
  /** JSON pointer into the message (method), or into the definition; `*` stands for any key or index. */
  pointer: string;
  message: string;
  /** The methods the definition reaches, for a change said for a definition. */
  methods?: Reach[];
}

export interface Report {
  view: View;
  changes: SchemaChange[];
  warnings: string[];
  totals: Partial<Record<Severity, number>>;
  /** Exit status: 1 when a change breaks (or, for a server, must be honoured). */
  failed: boolean;
}

const KIND_ORDER: MethodKind[] = ["request", "notification", "server-request", "server-notification"];

export function buildReport(comparison: Comparison, methods?: Set<string>): Report {
  const { view } = comparison;
  const served = (name: string) => methods === undefined || methods.has(name);
  const changes: SchemaChange[] = comparison.methodChanges.filter((c) => served(c.method)).map((c) => ({ ...c, pointer: "" }));
  for (const scope of comparison.scopes) {
    if (!scope.findings.length) continue;
    if (scope.method) {
      if (!served(scope.method.name)) continue;
      for (const f of scope.findings) changes.push({ severity: severityOf(f.impact, view), kind: scope.method.kind, method: scope.method.name, pointer: f.pointer, message: withVariant(f.message, f.variant) });
      continue;
    }
    const reaches = reachOf(scope).filter((r) => served(r.method));
    if (!reaches.length) continue;
    for (const f of scope.findings) changes.push(reaches.length === 1 ? forMethod(f, reaches[0]!, view) : forDefinition(f, scope.definition!, reaches, view));
  }
  changes.sort(byPlace);
  const warnings = comparison.warnings.filter((w) => w.method === undefined || served(w.method)).map((w) => w.text);
  if (methods) {
    const known = new Set([...comparison.methodChanges.map((c) => c.method), ...comparison.scopes.flatMap((s) => (s.method ? [s.method.name] : []))]);
    for (const name of methods) if (!known.has(name)) warnings.push(`--methods names ${name}, which neither bundle has`);
  }
  const totals = Object.fromEntries(SEVERITIES[view].map((s) => [s, changes.filter((c) => c.severity === s).length]));
  return { view, changes, warnings, totals, failed: changes.some((c) => fails(c.severity)) };
}

const withVariant = (message: string, variant: string[]) => (variant.length ? `${message} (${variant.join(", ")})` : message);

/** One method reaches the definition: said for it, at the full pointer, within the variants on the way. */
function forMethod(f: Finding, reach: Reach & { variant: string[] }, view: View): SchemaChange {
  return { severity: severityOf(f.impact, view), kind: reach.kind, method: reach.method, pointer: reach.pointer + f.pointer, message: withVariant(f.message, [...reach.variant, ...f.variant]) };
}

function forDefinition(f: Finding, definition: string, reaches: Reach[], view: View): SchemaChange {
  return {
    severity: severityOf(f.impact, view),
    definition,
    pointer: f.pointer,
    message: withVariant(f.message, f.variant),
    methods: reaches.map(({ kind, method, pointer }) => ({ kind, method, pointer })),
  };
}

/**
 * Every method that reaches a definition scope (through other definitions), each once, with the
 * shortest way there: the pointer into its message and the variants it passes.
 */
export function reachOf(scope: Scope): Array<Reach & { variant: string[] }> {
  const found = new Map<string, Reach & { variant: string[] }>();
  const visited = new Set<Scope>([scope]);
  let layer = [{ scope, pointer: "", variant: [] as string[] }];
  while (layer.length) {
    const next: typeof layer = [];
    for (const { scope: at, pointer, variant } of layer) {
      for (const edge of at.incoming) {
        if (visited.has(edge.from)) continue;
        visited.add(edge.from);
        const step = { scope: edge.from, pointer: edge.pointer + pointer, variant: [...edge.variant, ...variant] };
        const method = edge.from.method;
        if (method) found.set(`${method.kind} ${method.name}`, { kind: method.kind, method: method.name, pointer: step.pointer, variant: step.variant });
        else next.push(step);
      }
    }
    layer = next;
  }
  return [...found.values()].sort((a, b) => KIND_ORDER.indexOf(a.kind) - KIND_ORDER.indexOf(b.kind) || a.method.localeCompare(b.method));
}

/** Method changes first (by kind, method, pointer), then shared definitions by name. */
function byPlace(a: SchemaChange, b: SchemaChange): number {
  if (!!a.definition !== !!b.definition) return a.definition ? 1 : -1;
  if (a.definition) return a.definition.localeCompare(b.definition!) || a.pointer.localeCompare(b.pointer) || a.message.localeCompare(b.message);
  return KIND_ORDER.indexOf(a.kind!) - KIND_ORDER.indexOf(b.kind!) || a.method!.localeCompare(b.method!) || a.pointer.localeCompare(b.pointer);
}

/**
 * The text form: `<severity> <kind> <method> <pointer>: <what>`, or for a shared definition
 * `<severity> <Definition> <pointer>: <what>` and an indented line naming the methods it reaches.
 */
export function textLines(change: SchemaChange): string {
  if (!change.definition) return `${change.severity} ${change.kind} ${change.method} ${change.pointer || "/"}: ${change.message}`;
  const reaches = change.methods!;
  const byKind = KIND_ORDER.flatMap((kind) => {
    const names = reaches.filter((r) => r.kind === kind).map((r) => r.method);
    return names.length ? [`${describeKind(kind)}${names.length > 1 ? "s" : ""} ${names.join(", ")}`] : [];
  });
  const example = [...reaches].sort((a, b) => a.pointer.length - b.pointer.length)[0]!;
  return `${change.severity} ${change.definition} ${change.pointer || "/"}: ${change.message}\n  reaches ${reaches.length} methods: ${byKind.join("; ")} (e.g. ${example.kind} ${example.method} ${example.pointer || "/"})`;
}

export function totalsLine(report: Report): string {
  return SEVERITIES[report.view].map((s) => `${report.totals[s] ?? 0} ${s}`).join(", ");
}
