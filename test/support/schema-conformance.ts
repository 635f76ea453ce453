/**
 * Compares a definition of the gateway's registry (JSON Schema 2019-09, `$ref: #/$defs/X`) with
 * the official one it mirrors (draft-07, `$ref: #/definitions[/v2]/X`), structurally: every field
 * the registry names exists there, the fields the official schema requires are required by the
 * registry where the gateway sends the value (and the registry requires no more where it receives
 * one), enum values are the official ones, and each union member the registry lists is a member
 * there (matched by its `type` tag, its constant or its single key). Union members, values and
 * fields described as a gateway extension are skipped; they are the documented exceptions.
 */

type Json = Record<string, any>;
export type Direction = "sent" | "received";

export interface Schemas {
  ours(ref: string): Json;
  official(ref: string): Json;
}

const EXTENSION = /^Gateway extension/;

export function conformanceProblems(schemas: Schemas, ours: Json, official: Json, direction: Direction, path: string): string[] {
  const problems: string[] = [];
  compare(deref(ours, schemas.ours), deref(official, schemas.official), path);
  return problems;

  function compare(a: Json, b: Json, at: string): void {
    a = nonNull(deref(a, schemas.ours));
    b = nonNull(deref(b, schemas.official));
    const aMembers = a.oneOf ?? a.anyOf;
    if (aMembers) {
      for (const member of aMembers as Json[]) {
        const m = deref(member, schemas.ours);
        if (typeof m.description === "string" && EXTENSION.test(m.description)) continue;
        if (m.type === "null") continue;
        if (m.oneOf || m.anyOf) {
          compare(m, b, at); // a union inside a union: its members are members too
          continue;
        }
        const match = officialMember(m, b);
        if (!match) problems.push(`${at}: no official union member matches ${describeMember(m)}`);
        else compare(m, match, `${at}<${describeMember(m)}>`);
      }
      return;
    }
    if (a.enum || a.const !== undefined) {
      const ours = new Set<unknown>(a.enum ?? [a.const]);
      const theirs = new Set<unknown>(officialValues(b));
      if (a.enum) {
        if (!sameSet(ours, theirs)) problems.push(`${at}: enum ${JSON.stringify([...ours])} is not the official ${JSON.stringify([...theirs])}`);
      } else if (!theirs.has(a.const)) problems.push(`${at}: constant ${JSON.stringify(a.const)} is not one of ${JSON.stringify([...theirs])}`);
      return;
    }
    if (a.properties) {
      if (Object.keys(a.properties).length === 0) return; // an empty object: nothing to hold against the official one
      const target = b.properties ? withAlternativeFields(b) : b.oneOf || b.anyOf ? officialMember(a, b) : b;
      if (!target?.properties) {
        problems.push(`${at}: an object here, none in the official schema`);
        return;
      }
      const ourRequired = new Set<string>(a.required ?? []);
      const theirRequired = new Set<string>(target.required ?? []);
      for (const [name, schema] of Object.entries(a.properties as Json)) {
        // A field of the gateway's own (its relays' tauGateway… fields, docs/differences.md) says so.
        if (!(name in target.properties) && typeof (schema as Json).description === "string" && EXTENSION.test((schema as Json).description)) continue;
        if (!(name in target.properties)) {
          problems.push(`${at}.${name}: not an official field`);
          continue;
        }
        compare(schema as Json, target.properties[name], `${at}.${name}`);
      }
      if (direction === "sent") {
        for (const name of theirRequired) if (!ourRequired.has(name)) problems.push(`${at}.${name}: required officially, optional here`);
      } else {
        for (const name of ourRequired) if (!theirRequired.has(name)) problems.push(`${at}.${name}: required here, optional officially`);
      }
      return;
    }
    if (a.type === "array" && a.items) {
      const items = b.items ?? (b.type === "array" ? {} : undefined);
      if (items === undefined) problems.push(`${at}: an array here, not officially`);
      else if (items !== true) compare(a.items, items, `${at}[]`);
      return;
    }
    if (a.additionalProperties && typeof a.additionalProperties === "object" && b.additionalProperties && typeof b.additionalProperties === "object") {
      compare(a.additionalProperties, b.additionalProperties, `${at}{}`);
    }
  }

  function officialMember(a: Json, b: Json): Json | undefined {
    const members = ((b.oneOf ?? b.anyOf) as Json[] | undefined)?.map((m) => withAlternativeFields(nonNull(deref(m, schemas.official)))) ?? [b];
    const tag = a.properties?.type?.const;
    if (tag !== undefined) return members.find((m) => officialValues(m.properties?.type ?? {}).includes(tag));
    if (a.const !== undefined) return members.find((m) => officialValues(m).includes(a.const));
    if (a.enum) return members.find((m) => a.enum.every((v: unknown) => officialValues(m).includes(v))) ?? (members.some((m) => m.enum) ? { enum: members.flatMap((m) => officialValues(m)) } : undefined);
    if (a.properties) {
      const keys = Object.keys(a.properties);
      return members.find((m) => m.properties && keys.every((k) => k in m.properties));
    }
    return members.find((m) => m.type === a.type || (Array.isArray(m.type) && m.type.includes(a.type)));
  }

  function officialValues(b: Json): unknown[] {
    b = deref(b, schemas.official);
    if (b.enum) return b.enum;
    if (b.const !== undefined) return [b.const];
    const members = (b.oneOf ?? b.anyOf) as Json[] | undefined;
    return members ? members.flatMap((m) => officialValues(m)) : [];
  }
}

/** An object whose alternative fields sit in an `anyOf` beside its properties (`url` or `fileId`): all of them are its fields. */
function withAlternativeFields(b: Json): Json {
  const alternatives = (b.anyOf ?? b.oneOf) as Json[] | undefined;
  if (!alternatives) return b;
  return { ...b, properties: Object.assign({}, b.properties, ...alternatives.map((m) => m.properties ?? {})) };
}

function deref(schema: Json, resolve: (ref: string) => Json): Json {
  let s = schema;
  for (let i = 0; i < 20; i++) {
    if (typeof s !== "object" || s === null) return {};
    if (s.$ref) s = { ...resolve(s.$ref), ...withoutRef(s) };
    else if (Array.isArray(s.allOf) && s.allOf.length === 1) s = { ...s.allOf[0], ...withoutAllOf(s) };
    else return s;
  }
  throw new Error("reference chain too long");
}

const withoutRef = ({ $ref: _r, ...rest }: Json) => rest;
const withoutAllOf = ({ allOf: _a, ...rest }: Json) => rest;

/** `X | null` → `X` (both spellings: a null union member, or a type list with "null"). */
function nonNull(s: Json): Json {
  const members = (s.oneOf ?? s.anyOf) as Json[] | undefined;
  if (members) {
    const rest = members.filter((m) => !(m.type === "null"));
    if (rest.length === 1 && rest.length < members.length) return rest[0]!;
    if (rest.length < members.length) return { ...s, [s.oneOf ? "oneOf" : "anyOf"]: rest };
  }
  if (Array.isArray(s.type) && s.type.includes("null")) {
    const types = s.type.filter((t: string) => t !== "null");
    return { ...s, type: types.length === 1 ? types[0] : types };
  }
  return s;
}

const sameSet = (a: Set<unknown>, b: Set<unknown>) => a.size === b.size && [...a].every((v) => b.has(v));
const describeMember = (m: Json) => (m.properties?.type?.const ? `type ${m.properties.type.const}` : m.const !== undefined ? JSON.stringify(m.const) : m.enum ? JSON.stringify(m.enum) : Object.keys(m.properties ?? {}).join("+") || String(m.type));
