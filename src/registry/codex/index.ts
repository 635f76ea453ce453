import { jsonRpcDefinitions, jsonRpcFrames } from "../jsonrpc.js";
import type { DialectRegistry } from "../model.js";
import { codexErrorEntries } from "./errors.js";
import { codexMethodEntries } from "./methods.js";
import { codexNotificationEntries } from "./notifications.js";
import { codexServerRequestEntries } from "./server-requests.js";
import { typeDefinitions } from "./types.js";

/**
 * OpenAI Codex's app-server protocol v2 (JSON-RPC 2.0, the `"jsonrpc"` member omitted), the
 * subset the gateway serves. The official schema (`codex app-server generate-json-schema`,
 * @openai/codex 0.169.0) is the reference for every name; test/unit/codex-registry.test.ts holds the
 * registry to it.
 */
export const CODEX_PROTOCOL_VERSION = "2";
/** The @openai/codex release whose schema the registry follows. */
export const CODEX_REFERENCE_VERSION = "0.169.0";

export const codexRegistry: DialectRegistry<"codex"> = {
  dialect: "codex",
  title: "Codex app-server protocol",
  versions: [CODEX_PROTOCOL_VERSION],
  definitions: { ...jsonRpcDefinitions, ...typeDefinitions },
  methods: [...codexMethodEntries, ...codexServerRequestEntries],
  notifications: codexNotificationEntries,
  serverMessages: [],
  events: [],
  errors: codexErrorEntries,
  frame: jsonRpcFrames({ nullParams: true }),
};

export { CODEX_ERROR_CODES, type CodexErrorName } from "./errors.js";
export * from "./types.js";
