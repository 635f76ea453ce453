import type { ValidateFunction } from "ajv/dist/2019.js";
import { ajv2019, ajvFormats } from "../../shared/lazy-ajv.js";
import { explain, formatIssue } from "../../validation/issues.js";

/**
 * Client-tool argument schemas. Tau passes them through to the model as opaque JSON Schema, so the
 * gateway checks the model's arguments itself before anything runs. These are operator-written
 * schemas (or a Codex client's dynamic tools), not protocol ones: they are compiled leniently
 * (unknown keywords allowed, as models' tool schemas often carry them), each in its own ajv
 * instance so an `$id` in one tool's schema can never clash with another's.
 *
 * Compiling is costly (ajv generates code: milliseconds for a small schema, about half a
 * millisecond per property more), so compiled schemas are cached by their JSON text, a bounded
 * number of them: the same tools offered by many threads are compiled once. A schema is first
 * checked against the draft's meta-schema by one shared instance (a fraction of a millisecond),
 * which answers a schema that is no JSON Schema without compiling it.
 */

/** Compiled schemas kept, by JSON text; the least recently used goes first. */
export const COMPILED_SCHEMAS_KEPT = 512;

const compiled = new WeakMap<object, ValidateFunction>();
const byText = new Map<string, ValidateFunction>();
let metaChecker: InstanceType<ReturnType<typeof ajv2019>> | undefined;

const newAjv = (options: { validateSchema: boolean }) => {
  const Ajv = ajv2019();
  const ajv = new Ajv({ strict: false, allErrors: true, verbose: true, logger: false, ...options });
  ajvFormats()(ajv);
  return ajv;
};

/**
 * Throws Error with ajv's reason when `schema` is not a JSON Schema of the draft (its meta-schema
 * says), without compiling it: for schemas whose arguments the gateway does not check itself.
 * A `pattern` in it is only parsed (the meta-schema's `regex` format), never run.
 */
export function checkSchemaDocument(schema: object): void {
  metaChecker ??= newAjv({ validateSchema: true });
  if (!metaChecker.validateSchema(schema)) throw new Error(metaChecker.errorsText(metaChecker.errors, { dataVar: "schema" }));
}

/** Compiles a tool's `parameters`; throws Error with ajv's reason when it is not a usable schema. */
export function compileArgumentSchema(parameters: object): ValidateFunction {
  let fn = compiled.get(parameters);
  if (fn) return fn;
  const text = JSON.stringify(parameters);
  fn = byText.get(text);
  if (fn) {
    byText.delete(text);
  } else {
    checkSchemaDocument(parameters);
    // The meta-schema check is done: the instance of this schema alone need not compile the meta-schema again.
    fn = newAjv({ validateSchema: false }).compile(parameters);
  }
  byText.set(text, fn);
  if (byText.size > COMPILED_SCHEMAS_KEPT) byText.delete(byText.keys().next().value!);
  compiled.set(parameters, fn);
  return fn;
}

/** Undefined when `args` satisfy `parameters`, otherwise one line per problem (`/question: is required`). */
export function argumentProblems(parameters: object, args: unknown): string | undefined {
  const fn = compileArgumentSchema(parameters);
  if (fn(args)) return undefined;
  const issues = explain(fn.errors);
  return issues.length > 0 ? issues.map(formatIssue).join("; ") : "do not match the tool's parameters";
}
