import type { FastifyRequest } from "fastify";
import type { TappedPeer } from "../transports/recording/frame-tap.js";

/** Who a request authenticated as (once the front door's hooks ran), as the frame tap records it. */
export function tappedPeerOf(request: FastifyRequest): TappedPeer {
  return { tenant: request.tenant, tokenId: request.principal?.tokenId, remoteAddress: request.ip };
}
