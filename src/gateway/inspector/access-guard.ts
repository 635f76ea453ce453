import type { FastifyReply, FastifyRequest } from "fastify";
import { hostNameOf } from "../auth/hosts.js";
import { trustedPeer } from "../trusted-peer.js";

/**
 * Who may open the inspector, which shows every frame of every client (prompts, file contents,
 * tool output): checked on each of its routes, on top of the gateway's own front door.
 * - The Host header must name the gateway as the operator reaches it (loopback names, the listen
 *   address, or the names given with --inspector-hosts): a page of another site that got its name
 *   to resolve to this address (DNS rebinding) is refused.
 * - An Origin header, when a browser sends one, must be this same origin.
 * - With tokens, a valid token: an operator's (`"operator": true` in the tokens file) sees every
 *   tenant's traffic, any other token its own tenant's (inspector-viewer.ts). The page's own files
 *   hold no data and load without one; every data route needs it.
 * - Without tokens, only a peer on this machine, reached directly (no proxy's forwarding headers).
 */

export interface InspectorAccess {
  /** Whether the gateway checks tokens at all. */
  authenticated: boolean;
  /** Host names (lower case, IPv6 without brackets) the Host header may carry besides the loopback names. */
  hosts: readonly string[];
}

/** Addresses only this machine has (IPv4-mapped IPv6 included), matched as trustProxy's "loopback" is. */
const loopback = trustedPeer(["loopback"]);
const isLoopbackAddress = (address: string | undefined): boolean => address !== undefined && loopback(address);

/** Whether the request came from the page's own origin (or from no browser page: no Origin header). */
function sameOrigin(origin: string | undefined, host: string | undefined): boolean {
  if (origin === undefined) return true;
  try {
    const url = new URL(origin);
    return (url.protocol === "http:" || url.protocol === "https:") && url.host === (host ?? "").toLowerCase();
  } catch {
    return false;
  }
}

/** Refuses the request (and returns the reply) when it may not see the inspector; undefined when it may. */
export function refuseInspector(access: InspectorAccess, request: FastifyRequest, reply: FastifyReply): FastifyReply | undefined {
  const name = hostNameOf(request.headers.host);
  if (name === undefined || !access.hosts.includes(name)) {
    return refuse(reply, 403, "forbidden_host", `the inspector answers only to the host names ${access.hosts.join(", ")} (see --inspector-hosts)`);
  }
  if (!sameOrigin(request.headers.origin, request.headers.host)) return refuse(reply, 403, "forbidden_origin", "the inspector answers only to its own page");
  if (!access.authenticated) {
    const proxied = request.headers["x-forwarded-for"] !== undefined || request.headers.forwarded !== undefined;
    if (proxied || !isLoopbackAddress(request.socket.remoteAddress) || !isLoopbackAddress(request.ip)) {
      return refuse(reply, 403, "forbidden_peer", "without tokens the inspector answers only to this machine (loopback), never through a proxy");
    }
    return undefined;
  }
  // The front door already refused a data request without a valid token (401); what a token may
  // see (an operator everything, another its own tenant's) is inspector-viewer.ts's to say.
  return undefined;
}

function refuse(reply: FastifyReply, status: 403, error: string, message: string): FastifyReply {
  return reply.code(status).header("Cache-Control", "no-store").send({ error, message });
}
