/**
 * The stable name of a Tau host in the shared store (placements, leases): its upstream URL without
 * credentials (user info, a `tau_token` parameter) and without a trailing slash, so replicas given
 * the same host with different tokens still agree on its name, and no key in the store holds a secret.
 */
export function hostKeyOf(url: string): string {
  try {
    const parsed = new URL(url);
    parsed.username = "";
    parsed.password = "";
    parsed.searchParams.delete("tau_token");
    return parsed.toString().replace(/\/$/, "");
  } catch {
    return url;
  }
}
