import type { ValidateFunction } from "ajv/dist/2019.js";
import { ajv2019, ajvFormats } from "../../shared/lazy-ajv.js";
import { explain, formatIssue } from "../../validation/issues.js";

/**
 * Client-tool argument schemas. Tau passes them through to the model as opaque JSON Schema, so the
 * gateway checks the model's arguments itself before anything runs. These are operator-written
 * schemas, not protocol ones: they are compiled leniently (unknown keywords allowed, as models'
 * tool schemas often carry them), each in its own ajv instance so an `$id` in one tool's schema
 * can never clash with another's, and cached per schema object.
 */

const compiled = new WeakMap<object, ValidateFunction>();

/** Compiles a tool's `parameters`; throws Error with ajv's reason when it is not a usable schema. */
export function compileArgumentSchema(parameters: object): ValidateFunction {
  let fn = compiled.get(parameters);
  if (!fn) {
    const Ajv = ajv2019();
    const ajv = new Ajv({ strict: false, allErrors: true, verbose: true, logger: false });
    ajvFormats()(ajv);
    fn = ajv.compile(parameters);
    compiled.set(parameters, fn);
  }
  return fn;
}

/** Undefined when `args` satisfy `parameters`, otherwise one line per problem (`/question: is required`). */
export function argumentProblems(parameters: object, args: unknown): string | undefined {
  const fn = compileArgumentSchema(parameters);
  if (fn(args)) return undefined;
  const issues = explain(fn.errors);
  return issues.length > 0 ? issues.map(formatIssue).join("; ") : "do not match the tool's parameters";
}
