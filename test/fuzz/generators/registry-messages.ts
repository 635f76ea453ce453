import fc from "fast-check";
import { readSchemaFile } from "../../../src/validation/schema-files.js";
import type { Dialect } from "../../../src/registry/index.js";
import { ProtocolValidators } from "../../../src/validation/validator.js";
import type { FuzzSizes } from "../settings.js";
import { anyJson } from "./hostile.js";
import { anyId, withId } from "./ids.js";
import { liveProperty } from "./live-values.js";
import { applyMutations, mutationList } from "./mutations.js";
import { schemaValues } from "./schema-values.js";

/**
 * Client messages of one dialect, from the registry: a valid request of every client method (built
 * from its definition in the generated schema, plus any recorded examples), then given an id of
 * any type and mutated — so most messages are almost right, which is where validation has edges.
 */

export interface RegistryMessageOptions {
  /** Valid client messages recorded elsewhere (fixtures), used as templates besides the schema's. */
  examples?: Array<Record<string, unknown>>;
  /** How often a method comes up relative to the others (default 1), e.g. to reach turns often. */
  weights?: Record<string, number>;
}

/** A valid request for every client method of the dialect's current version (the schema decides). */
export function validRequests(dialect: Dialect, options: RegistryMessageOptions = {}): fc.Arbitrary<Record<string, unknown>> {
  const validators = ProtocolValidators.shared();
  const version = validators.currentVersion(dialect);
  const bundleFile = validators.index.bundles.find((b) => b.dialect === dialect && b.version === version)!.schema;
  const bundle = readSchemaFile<{ $defs: Record<string, Record<string, unknown>> }>(bundleFile);
  const entries = validators.index.entries.filter(
    (e) => e.dialect === dialect && e.kind === "request" && e.direction === "client-to-server" && e.versions.includes(version as never),
  );
  const fromSchema = entries.map((e) => ({
    // fast-check takes integer weights: tenths.
    weight: Math.round((options.weights?.[e.name] ?? 1) * 10),
    arbitrary: schemaValues(bundle, e.definitions.request!, { special: liveProperty }) as fc.Arbitrary<Record<string, unknown>>,
  }));
  const examples = options.examples ?? [];
  return fc.oneof(...fromSchema, ...(examples.length ? [{ weight: 10, arbitrary: fc.constantFrom(...examples) }] : []));
}

/** A request of the dialect: valid, with another id, mutated, or any JSON object at all. */
export function clientMessages(dialect: Dialect, sizes: FuzzSizes, options: RegistryMessageOptions = {}): fc.Arbitrary<unknown> {
  const valid = validRequests(dialect, options);
  const reId = fc.tuple(valid, anyId()).map(([message, id]) => withId(message, id));
  const idOfAnyKind = fc.oneof({ weight: 2, arbitrary: valid }, { weight: 1, arbitrary: reId });
  return fc.oneof(
    { weight: 4, arbitrary: valid },
    { weight: 2, arbitrary: reId },
    { weight: 6, arbitrary: fc.tuple(idOfAnyKind, mutationList(sizes)).map(([message, mutations]) => applyMutations(message, mutations)) },
    { weight: 1, arbitrary: fc.dictionary(fc.string({ maxLength: 8 }), anyJson(), { maxKeys: 6 }) },
  );
}
