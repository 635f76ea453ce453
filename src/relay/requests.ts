/**
 * The client's requests a relay has passed on (or holds) and not seen answered yet, so that none
 * is left hanging: each is settled by its answer, or answered by the relay itself in the dialect's
 * words when the link that carried it is lost or the relay stops.
 */

export type RequestId = string | number;

export interface OpenRequest {
  id: RequestId;
  method: string;
  params: unknown;
  /** The batch the request came in: requests the relay answers itself are answered per batch, as one array. */
  batch: object | undefined;
  /** The link generation that carried it; undefined while it waits for a link. */
  sentOn: number | undefined;
  /** The line to send again on a new link when the one that carried it is lost (RelayDialect.rejoins). */
  resend?: string;
  /** Settles `answered`. */
  settle(): void;
  /** Settles once the request is answered, by the gateway or by the relay. */
  answered: Promise<void>;
}

export const isRequestId = (value: unknown): value is RequestId => typeof value === "string" || (typeof value === "number" && Number.isInteger(value));

/** Ids as the client wrote them: 1 and "1" are different requests. */
export const keyOf = (id: RequestId): string => JSON.stringify(id);

export class OpenRequests {
  private readonly open = new Map<string, OpenRequest>();

  get size(): number {
    return this.open.size;
  }

  /** Records a request the client sent; a second request with the id of an open one replaces it (the first is no longer waited for). */
  add(id: RequestId, method: string, params: unknown, batch: object | undefined): OpenRequest {
    this.open.get(keyOf(id))?.settle();
    let settle!: () => void;
    const answered = new Promise<void>((resolve) => (settle = resolve));
    const request: OpenRequest = { id, method, params, batch, sentOn: undefined, settle, answered };
    this.open.set(keyOf(id), request);
    return request;
  }

  /** The open request an answer with this id is for, taken out of the table. */
  take(id: RequestId): OpenRequest | undefined {
    const request = this.open.get(keyOf(id));
    if (request) this.open.delete(keyOf(id));
    return request;
  }

  /** The open requests `which` accepts, left in the table. */
  where(which: (request: OpenRequest) => boolean): OpenRequest[] {
    return [...this.open.values()].filter(which);
  }

  /** Takes out every open request `which` accepts, grouped as the client sent them (one group per batch, or one request). */
  takeWhere(which: (request: OpenRequest) => boolean): OpenRequest[][] {
    const groups = new Map<object, OpenRequest[]>();
    for (const [key, request] of this.open) {
      if (!which(request)) continue;
      this.open.delete(key);
      const group = request.batch ?? request;
      groups.set(group, [...(groups.get(group) ?? []), request]);
    }
    return [...groups.values()];
  }
}
