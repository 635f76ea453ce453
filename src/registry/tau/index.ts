import type { DialectRegistry, ParamsWording } from "../model.js";
import { changeDefinitions } from "./changes.js";
import { clientToolDefinitions } from "./client-tools.js";
import { commonDefinitions } from "./common.js";
import { envelopeDefinitions, tauFrames } from "./envelope.js";
import { tauErrors } from "./errors.js";
import { messageDefinitions } from "./messages.js";
import { methodDefinitions, tauMethods } from "./methods.js";
import { serverMessageDefinitions, tauServerMessages } from "./server-messages.js";
import { snapshotDefinitions } from "./snapshot.js";

export { HOST_TOOL_NAMES, tauHostTools, type HostToolEntry } from "./host-tools.js";

/** Current Tau session protocol version; 13 is the oldest one a bundle is generated for. */
export const TAU_PROTOCOL_VERSION = 18;

/** Method names in the order Tau's `ready` lists them (every version; see entry `versions`). */
export const TAU_METHOD_ORDER: readonly string[] = tauMethods.map((m) => m.name);

/** Methods that only settle or cancel work already running (see `MethodEntry.settles`). */
export const TAU_SETTLING_METHODS: ReadonlySet<string> = new Set(tauMethods.filter((m) => m.settles).map((m) => m.name));

/** Tau's own sentences for each method's invalid params (see `MethodEntry.invalidParams`). */
export const TAU_PARAMS_WORDING: ReadonlyMap<string, ParamsWording> = new Map(tauMethods.flatMap((m) => (m.invalidParams ? [[m.name, m.invalidParams] as const] : [])));

export const tauRegistry: DialectRegistry<"tau"> = {
  dialect: "tau",
  title: "Tau session protocol",
  versions: [13, TAU_PROTOCOL_VERSION],
  definitions: {
    ...envelopeDefinitions,
    ...commonDefinitions,
    ...messageDefinitions,
    ...snapshotDefinitions,
    ...changeDefinitions,
    ...clientToolDefinitions,
    ...methodDefinitions,
    ...serverMessageDefinitions,
  },
  methods: tauMethods,
  notifications: [],
  serverMessages: tauServerMessages,
  events: [],
  errors: tauErrors,
  frame: tauFrames,
};
