import { compile } from "@fastify/proxy-addr";

/**
 * Whether a directly connected peer's address is one `trustProxy` names: every peer (`true`), none
 * (`false`, an empty list) or those matching the list's addresses, CIDR ranges and range names —
 * the peers Fastify reads X-Forwarded-For from, matched the same way.
 */
export function trustedPeer(trustProxy: boolean | string[]): (address: string) => boolean {
  if (trustProxy === true) return () => true;
  if (trustProxy === false || trustProxy.length === 0) return () => false;
  const trusts = compile(trustProxy);
  return (address) => trusts(address, 0);
}
