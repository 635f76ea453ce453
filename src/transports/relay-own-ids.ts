import type { RequestId } from "./relay-requests.js";

/**
 * Ids on a relay's link to the gateway: its own requests (repeated handshakes and resumes) are
 * `tau-gateway-relay:N`, and the gateway's answers to them are taken out of the stream. A client
 * may use any id, that prefix included: a client id that starts with it is sent escaped
 * (`tau-gateway-relay:client:` before it), so no client request can be taken for the relay's own
 * and go unanswered, and its answer is given back under the client's id.
 */

const OWN_PREFIX = "tau-gateway-relay:";
const CLIENT_ESCAPE = `${OWN_PREFIX}client:`;

/** The relay's own request id number `n`. */
export const ownId = (n: number): string => `${OWN_PREFIX}${n}`;

/** Whether an id on the link is one of the relay's own requests. */
export const isOwnId = (id: unknown): id is string => typeof id === "string" && id.startsWith(OWN_PREFIX) && !id.startsWith(CLIENT_ESCAPE);

/** A client's request id as it goes on the link. */
export const toLinkId = (id: RequestId): RequestId => (typeof id === "string" && id.startsWith(OWN_PREFIX) ? `${CLIENT_ESCAPE}${id}` : id);

/** The client's id of an id on the link. */
export const fromLinkId = (id: RequestId): RequestId => (typeof id === "string" && id.startsWith(CLIENT_ESCAPE) ? id.slice(CLIENT_ESCAPE.length) : id);
