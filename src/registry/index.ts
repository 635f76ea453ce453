import { askRegistry } from "./ask/index.js";
import type { DialectRegistry } from "./model.js";
import { tauRegistry } from "./tau/index.js";

export { askRegistry, tauRegistry };
export * from "./model.js";

/** Both dialects, in the order their bundles are generated. */
export const registries: DialectRegistry[] = [tauRegistry, askRegistry];
