import type { ClientRequests } from "../../../generated/tau-v18.js";
import type { RequestContext } from "../host-context.js";
import { clientToolMethods } from "./client-tool-methods.js";
import { connectionMethods } from "./connection-methods.js";
import { sideChannelMethods } from "./side-channel-methods.js";
import { stateMethods } from "./state-methods.js";
import { turnMethods } from "./turn-methods.js";

/** Answers one method: its result, or a promise of it (turn requests settle later). */
type Handler<M extends keyof ClientRequests> = (
  ctx: RequestContext,
  params: ClientRequests[M]["params"],
) => ClientRequests[M]["result"] | Promise<ClientRequests[M]["result"]>;

/**
 * Every v18 method's handler. The codec has already validated the params against the method's
 * schema, and only methods of v18 get this far (anything else is `method_not_found`).
 */
export const handlers = {
  ...connectionMethods,
  ...turnMethods,
  ...sideChannelMethods,
  ...stateMethods,
  ...clientToolMethods,
} satisfies { [M in keyof ClientRequests]: Handler<M> };
