import type { RequestId } from "./requests.js";

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

/** The relay's own requests on the current link, waiting for the gateway's answers (taken out of the stream). */
export class OwnRequests {
  private readonly waiting = new Map<string, (answer: Record<string, unknown>) => void>();
  private next = 1;

  /** Sends a request (`send` puts it on the link); resolves with the gateway's answer, or an error once the link is lost. */
  request(method: string, params: unknown, send: (message: { id: string; method: string; params: unknown }) => void): Promise<Record<string, unknown>> {
    const id = ownId(this.next++);
    return new Promise((resolve) => {
      this.waiting.set(id, resolve);
      send({ id, method, params });
    });
  }

  /** Takes the gateway's answer to one of them. */
  answer(message: { id: string } & Record<string, unknown>): void {
    const resolve = this.waiting.get(message.id);
    this.waiting.delete(message.id);
    resolve?.(message);
  }

  /** The link is lost: nothing more will answer them. */
  lost(): void {
    for (const resolve of this.waiting.values()) resolve({ error: { message: "the connection closed" } });
    this.waiting.clear();
  }
}
