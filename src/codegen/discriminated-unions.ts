/**
 * The fast tier's copy of a bundle: every union (`oneOf`, or `anyOf`) whose branches are told apart
 * by one tag property gets ajv's `discriminator` keyword, so ajv checks only the branch the tag
 * names instead of trying every branch (19 for a Tau delta change, most of a streamed delta's
 * validation time; 25 for an Ask event).
 *
 * The verdict is the same as the plain union's: a union qualifies only when every branch is an
 * object schema that requires the tag and fixes it to string values (`const` or `enum`) no other
 * branch uses, so at most one branch can ever accept a value, and it is the one its tag names;
 * a value without such a tag is accepted by no branch either way. Only the error a rejected value
 * gets differs, and errors come from the detailed tier, which compiles the bundle as generated.
 * Unions that do not qualify are left as they are.
 */

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
type SchemaObject = { [key: string]: Json };

const isSchemaObject = (v: Json | undefined): v is SchemaObject => typeof v === "object" && v !== null && !Array.isArray(v);

/** Keywords whose values are data, not schemas: never rewritten. */
const DATA_KEYWORDS = new Set(["const", "enum", "default", "examples", "required"]);

/** `schema` (a bundle with local `#/$defs/…` references) with discriminators added, as a new object sharing what did not change; `schema` is not changed. */
export function withDiscriminators<T extends object>(schema: T): T {
  const root = schema as unknown as SchemaObject;
  const defs = isSchemaObject(root.$defs) ? root.$defs : {};
  const resolve = (branch: Json): SchemaObject | undefined => {
    if (!isSchemaObject(branch)) return undefined;
    const ref = branch.$ref;
    if (ref === undefined) return branch;
    // A bare local reference, as ajv's discriminator resolves it; anything else is left alone.
    if (typeof ref !== "string" || Object.keys(branch).length !== 1) return undefined;
    const match = /^#\/\$defs\/([^/~]+)$/.exec(ref);
    const target = match ? defs[match[1]!] : undefined;
    return isSchemaObject(target) && target.$ref === undefined ? target : undefined;
  };

  // Only what changes is copied; everything else is shared with `schema`.
  const copy = (node: Json): Json => {
    if (Array.isArray(node)) {
      const items = node.map(copy);
      return items.some((item, i) => item !== node[i]) ? items : node;
    }
    if (!isSchemaObject(node)) return node;
    let out: SchemaObject | undefined;
    for (const key in node) {
      if (DATA_KEYWORDS.has(key)) continue;
      const value = copy(node[key]!);
      if (value !== node[key]) (out ??= { ...node })[key] = value;
    }
    if (node.discriminator !== undefined || (node.type !== undefined && node.type !== "object")) return out ?? node;
    // Only one union per schema object: ajv's discriminator belongs to its sibling `oneOf`.
    const union = Array.isArray(node.oneOf) ? "oneOf" : Array.isArray(node.anyOf) && node.oneOf === undefined ? "anyOf" : undefined;
    const tag = union && tagOf(node[union] as Json[], resolve);
    if (!union || tag === undefined) return out ?? node;
    out ??= { ...node };
    if (union === "anyOf") {
      // Branches with distinct required tags never accept one value together: any of them is exactly one of them.
      out.oneOf = out.anyOf!;
      delete out.anyOf;
    }
    out.discriminator = { propertyName: tag };
    // ajv's strict mode wants the object type the keyword applies to; every branch requires it already.
    out.type = "object";
    return out;
  };
  return copy(root) as unknown as T;
}

/** The property that tells the branches of a union apart, when there is one. */
function tagOf(branches: Json[], resolve: (branch: Json) => SchemaObject | undefined): string | undefined {
  const schemas = branches.map(resolve);
  if (schemas.length < 2 || !schemas.every((s): s is SchemaObject => s !== undefined && s.type === "object" && isSchemaObject(s.properties))) return undefined;
  candidates: for (const name of Object.keys(schemas[0]!.properties as SchemaObject)) {
    const seen = new Set<string>();
    for (const schema of schemas) {
      const property = (schema.properties as SchemaObject)[name];
      const required = schema.required;
      if (!isSchemaObject(property) || !Array.isArray(required) || !required.includes(name)) continue candidates;
      const values = typeof property.const === "string" ? [property.const] : Array.isArray(property.enum) ? property.enum : undefined;
      if (!values?.length) continue candidates;
      for (const value of values) {
        // ajv maps tags by truthy string values in a plain object: no empty one, no inherited name.
        if (typeof value !== "string" || value === "" || value in Object.prototype || seen.has(value)) continue candidates;
        seen.add(value);
      }
    }
    return name;
  }
  return undefined;
}
