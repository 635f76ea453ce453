import { acpRegistry } from "./acp/index.js";
import { askRegistry } from "./ask/index.js";
import { codexRegistry } from "./codex/index.js";
import { mcpRegistry } from "./mcp/index.js";
import type { DialectRegistry } from "./model.js";
import { tauRegistry } from "./tau/index.js";

export { acpRegistry, askRegistry, codexRegistry, mcpRegistry, tauRegistry };
export * from "./model.js";

/** Every dialect, in the order their bundles are generated: the one list of the registry's dialects. */
export const registries = [tauRegistry, askRegistry, codexRegistry, acpRegistry, mcpRegistry] as const satisfies readonly DialectRegistry[];

/** A dialect's name: one of the registries' above. */
export type Dialect = (typeof registries)[number]["dialect"];
