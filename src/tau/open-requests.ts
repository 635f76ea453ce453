import type { ErrorObject } from "../../generated/tau-v18.js";
import { settlesRunningWork } from "./settling-methods.js";

/**
 * The requests one Tau connection has sent and not yet seen answered, by id: the one owner of
 * request ids, the in-flight limit, per-request timeouts and cancellation, for the gateway's own
 * upstream client and for the `/tau` relay alike (as the MCP SDK's `Protocol` owns them for every
 * transport). A response is matched here to the request it answers, so that it can be checked
 * against that method's result schema.
 *
 * Ids must be unique among a connection's open requests (spec §2.1). Tau does not enforce it and
 * echoes whatever id it got, so two open requests with one id would leave their responses
 * impossible to tell apart: the second is refused with `invalid_request` instead of being sent.
 *
 * Tau has no per-request cancel (spec §9): giving up on a request (its signal aborted, its timeout
 * passed) tells the opener at once, but the request stays open until its response arrives, so
 * that response is still recognised and checked rather than taken for an unsolicited one.
 */

export interface OpenRequest<T> {
  readonly id: string;
  readonly method: string;
  /** `performance.now()` when it was opened. */
  readonly startedAt: number;
  /** What the opener keeps with the request (e.g. the callbacks of a caller's promise). */
  readonly context: T;
}

/** Why the wait for a response ended before the response. */
export type GiveUp = { reason: "aborted"; error: Error } | { reason: "timeout"; timeoutMs: number };

export interface OpenOptions<T> {
  /** The id the request travels with (a relayed client's own); omitted, the table chooses one. */
  id?: string;
  context: T;
  signal?: AbortSignal;
  timeoutMs?: number;
  /** Called at most once, when the signal aborts or the timeout passes before the response. */
  onGiveUp?: (why: GiveUp) => void;
}

export type Opened<T> = { ok: true; request: OpenRequest<T> } | { ok: false; error: ErrorObject };

export interface OpenRequestsOptions {
  /** Ids the table chooses are `<idPrefix><n>`, n counting from 1. */
  idPrefix?: string;
  /** Requests open at once, at most (settling ones not counted); undefined: no limit. */
  maxInflight?: number;
}

interface Entry<T> extends OpenRequest<T> {
  /** Counted against the in-flight limit. */
  readonly limited: boolean;
  /** Stops its timer and detaches its abort listener. */
  stopWaiting(): void;
}

export class OpenRequests<T> {
  private readonly byId = new Map<string, Entry<T>>();
  private limitedCount = 0;
  private nextId = 1;

  constructor(private readonly options: OpenRequestsOptions = {}) {}

  /** Open requests counted against the limit (those settling running work excluded). */
  get inflight(): number {
    return this.limitedCount;
  }

  /** Every open request, settling ones included. */
  get size(): number {
    return this.byId.size;
  }

  /** Records a request about to be sent, or says why it must be refused instead (never sent). */
  open(method: string, options: OpenOptions<T>): Opened<T> {
    const id = options.id ?? `${this.options.idPrefix ?? ""}${this.nextId++}`;
    if (this.byId.has(id)) {
      return refuse("invalid_request", `request id ${JSON.stringify(id)} is already used by an open request on this connection`);
    }
    const limited = !settlesRunningWork(method);
    const max = this.options.maxInflight;
    if (limited && max !== undefined && this.limitedCount >= max) {
      return refuse(
        "busy",
        `the gateway's in-flight limit was reached: ${this.limitedCount} requests of this connection are still waiting for their responses (limit ${max}); retry after some complete`,
      );
    }

    const { signal, timeoutMs, onGiveUp } = options;
    let timer: NodeJS.Timeout | undefined;
    const onAbort = () => giveUp({ reason: "aborted", error: abortError(signal!, method) });
    const stopWaiting = () => {
      clearTimeout(timer);
      signal?.removeEventListener("abort", onAbort);
    };
    const giveUp = (why: GiveUp) => {
      stopWaiting();
      onGiveUp?.(why);
    };
    const entry: Entry<T> = { id, method, startedAt: performance.now(), context: options.context, limited, stopWaiting };
    this.byId.set(id, entry);
    if (limited) this.limitedCount++;
    if (timeoutMs !== undefined) timer = setTimeout(() => giveUp({ reason: "timeout", timeoutMs }), timeoutMs);
    if (signal?.aborted) onAbort();
    else signal?.addEventListener("abort", onAbort, { once: true });
    return { ok: true, request: entry };
  }

  /** Closes the open request with this id (its response arrived, or it could not be sent) and returns it. */
  settle(id: string): OpenRequest<T> | undefined {
    const entry = this.byId.get(id);
    if (!entry) return undefined;
    this.forget(entry);
    return entry;
  }

  /** Closes every open request (the connection is gone: none of them will be answered) and returns them. */
  settleAll(): Array<OpenRequest<T>> {
    const entries = [...this.byId.values()];
    for (const entry of entries) this.forget(entry);
    return entries;
  }

  private forget(entry: Entry<T>): void {
    this.byId.delete(entry.id);
    if (entry.limited) this.limitedCount--;
    entry.stopWaiting();
  }
}

function refuse<T>(code: ErrorObject["code"], message: string): Opened<T> {
  return { ok: false, error: { code, message } };
}

/** The signal's own reason when it is an Error, else an AbortError naming the method. */
export function abortError(signal: AbortSignal, method: string): Error {
  if (signal.reason instanceof Error) return signal.reason;
  const error = new Error(`${method} was cancelled`);
  error.name = "AbortError";
  return error;
}
