import type { ErrorObject } from "ajv";
import type { ParamsWording } from "../registry/model.js";
import { pointerKeys } from "../shared/json-pointer.js";
import { isObject } from "../shared/unknown-values.js";

/**
 * Invalid params in Tau's own words. Tau parses params with zod and picks a fixed sentence by
 * where the first matching problem is (ParamsWording, from the registry); what no sentence names is
 * said as zod's issues, `path: message` joined by "; ". Our validator is ajv, so its errors are
 * first restated as the issues zod reports for the same value: same path, same message.
 */

/** One problem as Tau's parser (zod 4) reports it. */
interface TauIssue {
  path: string[];
  message: string;
  /** The value itself is of the wrong type (zod's invalid_type), as opposed to a check on it failing. */
  wrongType?: boolean;
}

/** Tau's message for params that failed validation with these (relevant) ajv errors. */
export function tauParamsMessage(method: string, wording: ParamsWording | undefined, errors: readonly ErrorObject[]): string {
  const issues = tauIssues(errors);
  if (!wording) return `${method} params are invalid: ${formatIssues(issues)}`;
  if (wording.always) return wording.always;
  if (wording.notObject && issues.some((i) => i.path.length === 0 && i.wrongType)) return wording.notObject;
  const hit = wording.fields.find((field) => issues.some((i) => samePath(i.path, field.path)));
  if (hit) return hit.withIssues ? `${hit.message}: ${formatIssues(issues)}` : hit.message;
  return `${wording.otherwise}: ${formatIssues(issues)}`;
}

/** zod's formatting of its issues, as Tau prints them. */
const formatIssues = (issues: readonly TauIssue[]) => issues.map((i) => (i.path.length ? `${i.path.join(".")}: ${i.message}` : i.message)).join("; ");

const samePath = (a: readonly string[], b: readonly string[]) => a.length === b.length && a.every((s, i) => s === b[i]);

type Json = Record<string, unknown>;

/** The registry's "no NUL characters" pattern (noNul). */
const NO_NUL = "^[^\\u0000]*$";

/** ajv's errors restated as zod's issues, in the order zod finds them (field by field). */
function tauIssues(errors: readonly ErrorObject[]): TauIssue[] {
  // A union whose tag matched no branch is one issue, and no branch of it is parsed: a
  // discriminated union's (Tau's environments and client-tool results) at the tag, a plain
  // union's (Tau's unions of array items, e.g. content blocks) at the union itself.
  const unions = [...discriminators(errors)].map(([tag, values]) => {
    const union = tag.slice(0, tag.lastIndexOf("/"));
    const plain = /\/\d+$/.test(union);
    const issue: TauIssue = plain
      ? { path: pointerKeys(union), message: "Invalid input" }
      : { path: pointerKeys(tag), message: `Invalid discriminator value. Expected ${values.map((v) => `'${String(v)}'`).join(" | ")}` };
    return { union, issue };
  });
  const out: TauIssue[] = [];
  const unrecognized = new Map<string, string[]>();
  const atPointer = new Map<string, ErrorObject[]>();
  for (const e of errors) atPointer.set(e.instancePath, [...(atPointer.get(e.instancePath) ?? []), e]);
  for (const e of errors) {
    const p = e.params as Json;
    const within = unions.find(({ union }) => e.instancePath === union || e.instancePath.startsWith(`${union}/`));
    if (within) {
      out.push(within.issue);
      continue;
    }
    const at = pointerKeys(e.instancePath);
    switch (e.keyword) {
      case "additionalProperties": {
        // zod reports every unknown key of one object as one issue at the object.
        const keys = unrecognized.get(e.instancePath);
        if (keys) keys.push(String(p.additionalProperty));
        else {
          const list = [String(p.additionalProperty)];
          unrecognized.set(e.instancePath, list);
          out.push({
            path: at,
            get message() {
              return `Unrecognized key${list.length > 1 ? "s" : ""}: ${list.map((k) => JSON.stringify(k)).join(", ")}`;
            },
          });
        }
        break;
      }
      case "required":
        out.push(missing(e, at, String(p.missingProperty)));
        break;
      case "type":
        // A nullable value reports a "null" alternative beside the real problem: only the real one counts.
        if (p.type === "null" && (atPointer.get(e.instancePath) ?? []).some((o) => o !== e)) break;
        out.push({ path: at, message: `Invalid input: expected ${expectedType(String(p.type), e.data)}, received ${received(e.data)}`, wrongType: true });
        break;
      case "const": {
        // The tag of a branch that did not match, beside the problems of the branch that did: noise.
        const parent = e.instancePath.slice(0, e.instancePath.lastIndexOf("/"));
        if (errors.some((o) => o.instancePath !== e.instancePath && o.instancePath.startsWith(`${parent}/`))) break;
        out.push({ path: at, message: `Invalid input: expected ${JSON.stringify(p.allowedValue)}` });
        break;
      }
      case "enum":
        out.push({ path: at, message: `Invalid option: expected one of ${(p.allowedValues as unknown[]).map((v) => JSON.stringify(v)).join("|")}` });
        break;
      case "minLength":
        out.push({ path: at, message: `Too small: expected string to have >=${String(p.limit)} characters` });
        break;
      case "maxLength":
        out.push({ path: at, message: `Too big: expected string to have <=${String(p.limit)} characters` });
        break;
      case "minimum":
        // Tau's positive integers are zod's `.positive()`, said as "> 0"; other bounds as ">=".
        out.push({ path: at, message: `Too small: expected number to be ${p.limit === 1 && isInteger(e.parentSchema) ? ">0" : `>=${String(p.limit)}`}` });
        break;
      case "exclusiveMinimum":
        out.push({ path: at, message: `Too small: expected number to be >${String(p.limit)}` });
        break;
      case "maximum":
        out.push({ path: at, message: `Too big: expected number to be <=${String(p.limit)}` });
        break;
      case "exclusiveMaximum":
        out.push({ path: at, message: `Too big: expected number to be <${String(p.limit)}` });
        break;
      case "maxItems":
        out.push({ path: at, message: `Too big: expected array to have <=${String(p.limit)} items` });
        break;
      case "propertyNames":
        break; // said by the error about the key itself
      case "pattern":
        // Tau checks process arguments for NUL as one rule on the whole array, not item by item.
        out.push({ path: p.pattern === NO_NUL && /^\d+$/.test(at.at(-1) ?? "") ? at.slice(0, -1) : at, message: "Invalid input" });
        break;
      default:
        out.push(keyError(e, at) ?? { path: at, message: "Invalid input" });
    }
  }
  return dedupe(out);
}

/**
 * Tags of discriminated unions that matched no branch, by pointer: ajv reports the tag once per
 * branch (a `const` each, or a `required` each when it is missing), so two or more values there.
 */
function discriminators(errors: readonly ErrorObject[]): Map<string, unknown[]> {
  const values = new Map<string, unknown[]>();
  const add = (pointer: string, value: unknown) => {
    const list = values.get(pointer) ?? [];
    if (!list.includes(value)) list.push(value);
    values.set(pointer, list);
  };
  for (const e of errors) {
    const p = e.params as Json;
    if (e.keyword === "const") add(e.instancePath, p.allowedValue);
    // A tag of the wrong type fails its branch's type before its const.
    const own = e.parentSchema as Json | undefined;
    if (e.keyword === "type" && own && "const" in own) add(e.instancePath, own.const);
    if (e.keyword === "required") {
      const property = String(p.missingProperty);
      const schema = propertySchema(e, property);
      if (schema && "const" in schema) add(`${e.instancePath}/${property}`, schema.const);
    }
  }
  return new Map([...values].filter(([, v]) => v.length > 1));
}

const propertySchema = (e: ErrorObject, property: string) => ((e.parentSchema as Json | undefined)?.properties as Json | undefined)?.[property] as Json | undefined;

/** An error about a record's key: zod checks keys one by one, except a rule on the whole record (HOME). */
function keyError(e: ErrorObject, at: string[]): TauIssue | undefined {
  if (e.propertyName === undefined) return undefined;
  if (e.keyword === "not") return { path: at, message: "Invalid input" };
  return { path: [...at, e.propertyName], message: "Invalid key in record" };
}

function missing(e: ErrorObject, at: string[], property: string): TauIssue {
  const schema = propertySchema(e, property);
  const type = schema ? typeOf(schema) : undefined;
  return { path: [...at, property], message: type ? `Invalid input: expected ${type}, received undefined` : "Invalid input" };
}

/** The type zod would expect for a schema: JSON types, integers as numbers, a nullable as its value. */
function typeOf(schema: Json): string | undefined {
  const t = schema.type;
  if (typeof t === "string") return t === "integer" ? "number" : t === "null" ? undefined : t;
  if (Array.isArray(t)) return t.map((x) => typeOf({ type: x })).find(Boolean);
  for (const key of ["anyOf", "oneOf"]) {
    const members = schema[key];
    if (Array.isArray(members)) for (const m of members) if (typeof m === "object" && m) return typeOf(m as Json) ?? undefined;
  }
  return undefined;
}

const isInteger = (schema: unknown) => isObject(schema) && schema.type === "integer";

function expectedType(type: string, data: unknown): string {
  if (type === "integer") return typeof data === "number" ? "int" : "number";
  return type;
}

function received(data: unknown): string {
  if (data === null) return "null";
  if (Array.isArray(data)) return "array";
  return typeof data;
}

function dedupe(issues: TauIssue[]): TauIssue[] {
  const seen = new Set<string>();
  return issues.filter((i) => {
    const key = `${i.path.join("\u0000")}\u0001${i.message}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}
