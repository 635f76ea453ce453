import { acpRegistry } from "./acp/index.js";
import { askRegistry } from "./ask/index.js";
import { codexRegistry } from "./codex/index.js";
import type { DialectRegistry } from "./model.js";
import { tauRegistry } from "./tau/index.js";

export { acpRegistry, askRegistry, codexRegistry, tauRegistry };
export * from "./model.js";

/** Every dialect, in the order their bundles are generated. */
export const registries: DialectRegistry[] = [tauRegistry, askRegistry, codexRegistry, acpRegistry];
