import type { DialectRegistry } from "../model.js";
import { askErrorEntries } from "./errors.js";
import { askEventEntries } from "./events.js";
import { askFrames, jsonRpcDefinitions } from "./jsonrpc.js";
import { askMethodEntries } from "./methods.js";
import { askNotificationEntries } from "./notifications.js";
import { askReverseRequestEntries, reverseRequestDefinitions } from "./reverse-requests.js";
import { typeDefinitions } from "./types.js";

/** Ask's PROTOCOL_VERSION; hosts announce it and do not negotiate. */
export const ASK_PROTOCOL_VERSION = "1.0";

export const askRegistry: DialectRegistry<"ask"> = {
  dialect: "ask",
  title: "Ask session protocol",
  versions: [ASK_PROTOCOL_VERSION],
  definitions: { ...jsonRpcDefinitions, ...typeDefinitions, ...reverseRequestDefinitions },
  methods: [...askMethodEntries, ...askReverseRequestEntries],
  notifications: askNotificationEntries,
  serverMessages: [],
  events: askEventEntries,
  errors: askErrorEntries,
  frame: askFrames,
};

export { ASK_ERROR_CODES, type AskErrorName } from "./errors.js";
export {
  APPROVING_DECISIONS,
  PERMISSION_DECISIONS,
  RISK_LEVELS,
  SESSION_APPROVING_DECISIONS,
} from "./reverse-requests.js";
export {
  APPROVAL_MODES,
  APPROVAL_SCOPES,
  ASK_TOOL_NAMES,
  CAPABILITIES,
  DELIVERY_KINDS,
  INTERACTION_KINDS,
  INTERACTION_STATUSES,
  SEND_MODES,
  SEND_STATUSES,
  SESSION_MODES,
} from "./types.js";
