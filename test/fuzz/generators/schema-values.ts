import fc from "fast-check";

/**
 * Values that satisfy a definition of a generated JSON Schema bundle (schema/*.schema.json), for
 * the keywords the registry uses: $ref, const, enum, anyOf/oneOf, type, properties/required,
 * additionalProperties, propertyNames, items, min/maxItems, uniqueItems, min/maxLength, pattern,
 * minimum/maximum. if/then/else, not and contains are not honoured: the result is a valid message
 * most of the time, and a near miss otherwise — both are what a fuzzer wants as a starting point.
 */

type Schema = Record<string, any>;

export interface SchemaValueOptions {
  /**
   * A generator for a property of this name, offered half of the time instead of the schema's own
   * (e.g. the id of a session that exists, or a working directory that does), or always (`only`).
   */
  special?: (property: string, schema: Schema) => { values: fc.Arbitrary<unknown>; only?: boolean } | undefined;
  /** Below this depth, optional properties and array items are left out. */
  maxDepth?: number;
}

const INT32 = 2 ** 31;

export function schemaValues(bundle: { $defs: Record<string, Schema> }, definition: string, options: SchemaValueOptions = {}): fc.Arbitrary<unknown> {
  const maxDepth = options.maxDepth ?? 6;
  const definitionOf = (ref: string): Schema => {
    const name = ref.replace(/^#\/\$defs\//, "");
    const schema = bundle.$defs[name];
    if (!schema) throw new Error(`no definition ${name}`);
    return schema;
  };

  // One arbitrary per definition and depth, built once (deeper levels leave optional parts out, so this ends).
  const byReference = new Map<string, fc.Arbitrary<unknown>>();
  const reference = (ref: string, depth: number): fc.Arbitrary<unknown> => {
    const key = `${ref}@${Math.min(depth, maxDepth)}`;
    let arbitrary = byReference.get(key);
    if (!arbitrary) {
      arbitrary = depth > maxDepth + 8 ? fc.constant(null) : value(definitionOf(ref), depth);
      byReference.set(key, arbitrary);
    }
    return arbitrary;
  };

  const value = (schema: Schema | boolean, depth: number): fc.Arbitrary<unknown> => {
    if (schema === true || schema === undefined) return fc.jsonValue({ maxDepth: depth >= maxDepth ? 0 : 2 });
    if (schema === false) return fc.constant(null);
    if (schema.$ref) return reference(schema.$ref, depth);
    if ("const" in schema) return fc.constant(schema.const);
    if (schema.enum) return fc.constantFrom(...(schema.enum as unknown[]));
    const branches = (schema.anyOf ?? schema.oneOf) as Schema[] | undefined;
    if (branches) {
      const { anyOf: _a, oneOf: _o, ...rest } = schema;
      return fc.oneof(...branches.map((b) => (b.$ref && Object.keys(rest).every((k) => k === "title" || k === "description") ? reference(b.$ref, depth) : value({ ...rest, ...b, ...(b.$ref ? definitionOf(b.$ref) : {}), $ref: undefined }, depth))));
    }
    const types = Array.isArray(schema.type) ? (schema.type as string[]) : schema.type ? [schema.type as string] : undefined;
    if (!types) {
      if (schema.properties) return object(schema, depth);
      return fc.jsonValue({ maxDepth: depth >= maxDepth ? 0 : 2 });
    }
    return fc.oneof(...types.map((t) => ofType(t, schema, depth)));
  };

  const ofType = (type: string, schema: Schema, depth: number): fc.Arbitrary<unknown> => {
    switch (type) {
      case "null":
        return fc.constant(null);
      case "boolean":
        return fc.boolean();
      case "integer":
        return integer(schema.minimum, schema.maximum);
      case "number":
        return fc.double({ min: schema.minimum ?? -1e9, max: schema.maximum ?? 1e9, noNaN: true, noDefaultInfinity: true });
      case "string":
        return string(schema);
      case "array":
        return array(schema, depth);
      case "object":
        return object(schema, depth);
      default:
        throw new Error(`unknown JSON Schema type ${type}`);
    }
  };

  const array = (schema: Schema, depth: number): fc.Arbitrary<unknown[]> => {
    const minLength = schema.minItems ?? 0;
    const maxLength = depth >= maxDepth ? minLength : Math.min(schema.maxItems ?? 4, Math.max(minLength, 4));
    const items = fc.array(value(schema.items ?? true, depth + 1), { minLength, maxLength });
    if (!schema.uniqueItems) return items;
    return items.map((list) => [...new Map(list.map((v) => [JSON.stringify(v), v])).values()]).filter((list) => list.length >= minLength);
  };

  const object = (schema: Schema, depth: number): fc.Arbitrary<Record<string, unknown>> => {
    const properties = (schema.properties ?? {}) as Record<string, Schema>;
    const required = new Set<string>(schema.required ?? []);
    const entries: Record<string, fc.Arbitrary<unknown>> = {};
    for (const [key, propertySchema] of Object.entries(properties)) {
      if (depth >= maxDepth && !required.has(key)) continue;
      const special = options.special?.(key, propertySchema);
      entries[key] = special?.only ? special.values : special ? fc.oneof(special.values, value(propertySchema, depth + 1)) : value(propertySchema, depth + 1);
    }
    if (Object.keys(properties).length > 0) return fc.record(entries, { requiredKeys: Object.keys(entries).filter((k) => required.has(k)) });
    if (depth >= maxDepth || schema.additionalProperties === false) return fc.constant({});
    const extra = typeof schema.additionalProperties === "object" ? (schema.additionalProperties as Schema) : true;
    // A map (e.g. attributes, env): keys from propertyNames when given.
    const keys = schema.propertyNames?.pattern ? fc.stringMatching(new RegExp(schema.propertyNames.pattern), { size: "xsmall" }) : fc.string({ minLength: 1, maxLength: 10 });
    const maxKeys = Math.min(schema.maxProperties ?? 3, 3);
    return fc.dictionary(keys, value(extra, depth + 1), { maxKeys, noNullPrototype: true });
  };

  return reference(`#/$defs/${definition}`, 0);
}

function integer(minimum: number | undefined, maximum: number | undefined): fc.Arbitrary<number> {
  const min = minimum ?? -1_000_000;
  const max = maximum ?? 1_000_000;
  const low = Math.max(min, -INT32);
  const high = Math.min(max, INT32 - 1);
  // fast-check's integers are 32-bit; the schema's bounds themselves are the interesting values beyond.
  const edges = [min, max].filter((n) => Number.isSafeInteger(n));
  return low <= high ? fc.oneof({ weight: 4, arbitrary: fc.integer({ min: low, max: high }) }, { weight: 1, arbitrary: fc.constantFrom(...edges) }) : fc.constantFrom(...edges);
}

function string(schema: Schema): fc.Arbitrary<string> {
  const minLength = schema.minLength ?? 0;
  const maxLength = Math.min(schema.maxLength ?? 24, 64);
  const pattern = schema.pattern as string | undefined;
  const fits = (s: string) => s.length >= minLength && s.length <= (schema.maxLength ?? Infinity);
  if (!pattern || pattern === "\\S") {
    const base = fc.string({ minLength: Math.max(minLength, pattern ? 1 : 0), maxLength: Math.max(maxLength, minLength) });
    return pattern ? base.filter((s) => /\S/.test(s)) : base;
  }
  const regex = new RegExp(pattern, "u");
  return fc.stringMatching(regex, { size: "small" }).filter(fits);
}
