import type { Log } from "../shared/log.js";
import { isObject } from "../shared/unknown-values.js";
import type { RelayDialect } from "./relay-dialect.js";
import { toLinkId } from "./own-ids.js";
import { isRequestId } from "./requests.js";
import type { ReverseRequests } from "./reverse-requests.js";
import type { StreamResume } from "./stream-resume.js";

type Message = Record<string, unknown>;

/** An element of a message left out of what is passed on (a stale answer, an unknown withdrawal). */
export const LEFT_OUT = Symbol("left out");

/**
 * How a relay rewrites a message on its way, one element of a line at a time: the dialect's resume
 * (positions, keys, Ask's renumbering), the client's ids as the link carries them (own-ids.ts),
 * and the gateway's requests under the relay's own ids (reverse-requests.ts).
 */
export class RelayTranslation {
  constructor(
    private readonly dialect: RelayDialect,
    private readonly resume: StreamResume | undefined,
    private readonly reverse: ReverseRequests,
    private readonly log: Log,
  ) {}

  /** A client message as it goes on the link; LEFT_OUT for an answer that is stale. */
  toLink(element: Message): Message | typeof LEFT_OUT {
    let out = this.resume?.toGateway?.(element) ?? element;
    if (typeof out.method !== "string") {
      if (!isRequestId(out.id)) return out;
      const gatewayId = this.reverse.answered(out.id);
      if (gatewayId === undefined) {
        // Withdrawn, asked on a lost link, or never asked: nobody waits for it, and it decides nothing.
        this.log("info", "a stale answer (to a request withdrawn or asked on a lost gateway connection) was dropped", { id: out.id });
        return LEFT_OUT;
      }
      return gatewayId === out.id ? out : { ...out, id: gatewayId };
    }
    if (isRequestId(out.id) && toLinkId(out.id) !== out.id) out = { ...out, id: toLinkId(out.id) };
    // The client withdrawing a request of its own (ACP's $/cancel_request) names it as the link does.
    if (out.method === this.dialect.withdrawalMethod && isObject(out.params) && isRequestId(out.params.requestId) && toLinkId(out.params.requestId) !== out.params.requestId) {
      out = { ...out, params: { ...out.params, requestId: toLinkId(out.params.requestId) } };
    }
    return out;
  }

  /** A request or notification of the gateway as the client reads it: its own requests under the relay's ids. */
  toClient(element: Message): Message | typeof LEFT_OUT {
    let out = this.resume?.toClient?.(element) ?? element;
    if (isRequestId(out.id)) return { ...out, id: this.reverse.asked(out.id, out.params) };
    if (out.method === this.dialect.withdrawalMethod && isObject(out.params) && isRequestId(out.params.requestId)) {
      // The gateway withdrew one of its requests itself (another client decided): named as the client knows it.
      const id = this.reverse.withdrawnByGateway(out.params.requestId);
      if (id === undefined) {
        this.log("debug", "a withdrawal of a request the client was never asked was dropped", { requestId: out.params.requestId });
        return LEFT_OUT;
      }
      out = { ...out, params: { ...out.params, requestId: id } };
    }
    return out;
  }
}
