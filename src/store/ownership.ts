/**
 * Leases on Tau hosts (one owner replica per host, with a fencing counter). The owner is the one
 * replica that advertises the gateway's client tools to a host, so it alone receives the host's
 * client-tool calls and delivers their answers.
 */
export interface HostOwnership {
  /** Whether this replica holds the lease on `hostKey` now (memory: always). */
  owns(hostKey: string): boolean;
  /** The fencing counter of the lease this replica holds on `hostKey`. */
  fence(hostKey: string): number | undefined;
  /** Called whenever this replica gains or loses a host's lease; returns the function that stops it. */
  onChange(listener: (hostKey: string, owned: boolean) => void): () => void;
}
