import type { FastifyRequest } from "fastify";

/** The tenant the authentication hooks put on the request (none when the gateway runs without tokens). */
export function requestTenant(request: FastifyRequest): string | undefined {
  return request.tenant ?? undefined;
}
