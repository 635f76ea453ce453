import type { DialectRegistry } from "../model.js";
import { capabilityDefinitions } from "./capabilities.js";
import { contentDefinitions } from "./content.js";
import { acpErrorEntries } from "./errors.js";
import { interactionDefinitions } from "./interactions.js";
import { acpFrames, jsonRpcDefinitions } from "./jsonrpc.js";
import { acpMethodEntries, acpNotificationEntries } from "./methods.js";
import { sessionDefinitions } from "./sessions.js";
import { updateDefinitions } from "./updates.js";

/** The one protocol version of ACP v1; an agent answers it whatever version the client asks for. */
export const ACP_PROTOCOL_VERSION = 1;

/**
 * The Agent Client Protocol v1, agent side: every message the gateway accepts from or sends to an
 * ACP client (an editor), with the official schema's type names for every shared type. The
 * official schema calls a method's params `…Request` and its result `…Response`; here, as in the
 * other dialects, those are `<Method>Params` and `<Method>Result`, and `<Method>Request` /
 * `<Method>Response` are the whole JSON-RPC messages.
 */
export const acpRegistry: DialectRegistry<"acp"> = {
  dialect: "acp",
  title: "Agent Client Protocol (agent side)",
  versions: [ACP_PROTOCOL_VERSION],
  definitions: {
    ...jsonRpcDefinitions,
    ...capabilityDefinitions,
    ...contentDefinitions,
    ...sessionDefinitions,
    ...updateDefinitions,
    ...interactionDefinitions,
  },
  methods: acpMethodEntries,
  notifications: acpNotificationEntries,
  serverMessages: [],
  events: [],
  errors: acpErrorEntries,
  frame: acpFrames,
};

export { ACP_ERROR_CODES, type AcpErrorName } from "./errors.js";
export { PERMISSION_OPTION_KINDS } from "./interactions.js";
export { SESSION_UPDATE_KINDS, TOOL_CALL_STATUSES, TOOL_KINDS } from "./updates.js";
