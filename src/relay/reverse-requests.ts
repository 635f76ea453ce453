import { keyOf, type RequestId } from "./requests.js";

/**
 * The gateway's requests to the client (Codex approvals and questions, ACP permission requests,
 * Ask's interaction/requestPermission and requestUserInput) as a relay puts them: each under an id
 * of the relay's own, never used twice in the relay's life, mapped to the gateway's id on the link
 * that asked it.
 *
 * The gateway numbers its requests per connection, so after a reconnect it asks again under the
 * ids it used on the lost link. Passed through unchanged, a late answer to a request the relay
 * withdrew (or ACP's prescribed `cancelled` reply to the `$/cancel_request`) would decide the
 * request asked again under the same id. Under the relay's own ids, an answer to a request that
 * is not pending on the current link is stale: it is dropped and decides nothing, and a request
 * asked again is a new request with a new id.
 */

interface Asked {
  gatewayId: RequestId;
  params: unknown;
}

/** Answered requests remembered for the withdrawal the gateway may still send (Codex's serverRequest/resolved follows every decision). */
const ANSWERED_KEPT = 1_000;

export class ReverseRequests {
  private nextId: number;
  /** Pending on the current link, by the relay's id (its key). */
  private readonly pending = new Map<string, Asked>();
  /** The relay's id of each request of the current link, by the gateway's id (its key): pending, or answered and kept. */
  private readonly relayIds = new Map<string, number>();

  constructor(firstId: number) {
    this.nextId = firstId;
  }

  /** Pending requests (of the current link). */
  get size(): number {
    return this.pending.size;
  }

  /** The gateway asked: the id the client is asked under. */
  asked(gatewayId: RequestId, params: unknown): number {
    const id = this.nextId++;
    const before = this.relayIds.get(keyOf(gatewayId));
    if (before !== undefined) this.pending.delete(keyOf(before));
    this.pending.set(keyOf(id), { gatewayId, params });
    this.remember(gatewayId, id);
    return id;
  }

  /** The client answered `id`: the gateway's id to pass the answer on under; undefined when it is stale (withdrawn, of a lost link, or never asked). */
  answered(id: RequestId): RequestId | undefined {
    const asked = this.pending.get(keyOf(id));
    if (!asked) return undefined;
    this.pending.delete(keyOf(id));
    return asked.gatewayId;
  }

  /** The gateway withdrew its request `gatewayId` (another client decided): the id the client knows it by, or undefined if the client never had it. Its answer is stale from now on. */
  withdrawnByGateway(gatewayId: RequestId): number | undefined {
    const id = this.relayIds.get(keyOf(gatewayId));
    if (id === undefined) return undefined;
    this.relayIds.delete(keyOf(gatewayId));
    this.pending.delete(keyOf(id));
    return id;
  }

  /** The link is lost: the requests still pending, which the relay withdraws (their ids stale from now on). */
  lost(): Array<{ id: number; params: unknown }> {
    const open = [...this.pending].map(([key, { params }]) => ({ id: JSON.parse(key) as number, params }));
    this.pending.clear();
    this.relayIds.clear();
    return open;
  }

  private remember(gatewayId: RequestId, id: number): void {
    this.relayIds.delete(keyOf(gatewayId));
    this.relayIds.set(keyOf(gatewayId), id);
    // Answered ones are kept only for a while: the oldest go first (pending ones are never that old in practice).
    if (this.relayIds.size > ANSWERED_KEPT + this.pending.size) {
      for (const [key, relayId] of this.relayIds) {
        if (this.pending.has(keyOf(relayId))) continue;
        this.relayIds.delete(key);
        break;
      }
    }
  }
}
