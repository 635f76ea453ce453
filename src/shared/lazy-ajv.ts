import { createRequire } from "node:module";
import type * as Ajv2019Module from "ajv/dist/2019.js";
import type AjvFormatsModule from "ajv-formats";

/**
 * ajv's compiler, required the first time something is compiled at run time rather than imported
 * with the module graph: the protocol's fast checks are precompiled (generated/validators/), so
 * a process that checks only valid messages, reads no tokens file and has no command tools never
 * loads the compiler (a tenth of the command line's bundle, parsed at every start otherwise).
 * Synchronous, as compiling is: the callers compile inside synchronous checks.
 */

const requireHere = createRequire(import.meta.url);

/** ajv's draft 2019-09 class (the dialect of every schema the gateway compiles). */
export function ajv2019(): typeof Ajv2019Module.Ajv2019 {
  return (requireHere("ajv/dist/2019.js") as typeof Ajv2019Module).Ajv2019;
}

/** ajv-formats' plugin (`format` keywords in operators' command-tool schemas). */
export function ajvFormats(): typeof AjvFormatsModule.default {
  // CommonJS: `module.exports` is the plugin, and its `default` the same function.
  return (requireHere("ajv-formats") as typeof AjvFormatsModule).default;
}
