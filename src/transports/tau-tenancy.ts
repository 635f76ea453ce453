import type { ErrorObject, SessionListResult, Snapshot } from "../../generated/tau-v18.js";
import { ATTR_TENANT } from "../bridge/session-attributes.js";
import type { Log } from "../shared/log.js";
import type { TauRequest } from "../tau/codec.js";
import { TauResponseError } from "../tau/upstream.js";
import { errorText } from "../shared/unknown-values.js";

/**
 * Tenants on the `/tau` passthrough. Tau itself has one full-access token and no notion of owners
 * (spec §1.2), so the gateway enforces them around the relay: sessions created through it carry
 * the tenant as the immutable attribute `tau-gateway.tenant` (the same one the Ask surface sets),
 * `session.list` answers list only the tenant's sessions, a request naming another tenant's
 * session is answered with Tau's own `not_found` without reaching the host, and server messages
 * about sessions the connection may not see are dropped.
 */

/** Who owns a session: it exists with this tenant attribute (undefined: none), or it does not exist. */
export type SessionOwner = { exists: true; tenant: string | undefined } | { exists: false };

/** Reads a session's snapshot over a connection the gateway owns (never the client's own). */
export type SnapshotReader = (sessionId: string) => Promise<Snapshot>;

/** What `SessionTenants.knownOwner` says of a session whose owner has not been learnt yet. */
export const NOT_KNOWN: unique symbol = Symbol("owner not known");

/** Owners learnt, kept at most; a session forgotten here is just looked up again. */
const MAX_KNOWN_OWNERS = 100_000;

/**
 * Session → tenant, shared by all `/tau` connections of a gateway. The attribute is immutable, so
 * an owner once learnt is cached for good; a session not found is not (it may be created later).
 */
export class SessionTenants {
  private readonly known = new Map<string, string | undefined>();
  private readonly lookups = new Map<string, Promise<SessionOwner>>();

  constructor(private readonly readSnapshot: SnapshotReader) {}

  /** Records the owner of a session the gateway just created. */
  remember(sessionId: string, tenant: string | undefined): void {
    if (this.known.size >= MAX_KNOWN_OWNERS) this.known.delete(this.known.keys().next().value!);
    this.known.set(sessionId, tenant);
  }

  /** The owner of a session when it is already known: its tenant attribute (undefined: none), or `NOT_KNOWN`. */
  knownOwner(sessionId: string): string | undefined | typeof NOT_KNOWN {
    const tenant = this.known.get(sessionId);
    return tenant !== undefined || this.known.has(sessionId) ? tenant : NOT_KNOWN;
  }

  /** The owner of a session; rejects when it cannot be learnt (e.g. the gateway's upstream is down). */
  owner(sessionId: string): Promise<SessionOwner> {
    if (this.known.has(sessionId)) return Promise.resolve({ exists: true, tenant: this.known.get(sessionId) });
    let lookup = this.lookups.get(sessionId);
    if (!lookup) {
      lookup = this.readSnapshot(sessionId).then(
        (snapshot): SessionOwner => {
          const tenant = snapshot.attributes[ATTR_TENANT];
          this.remember(sessionId, tenant);
          return { exists: true, tenant };
        },
        (err: unknown): SessionOwner => {
          if (err instanceof TauResponseError && err.code === "not_found") return { exists: false };
          throw err;
        },
      );
      const settled = () => this.lookups.delete(sessionId);
      lookup.then(settled, settled);
      this.lookups.set(sessionId, lookup);
    }
    return lookup;
  }
}

/** What happens to a client request: forwarded (possibly rewritten) or answered by the gateway. */
export type GateDecision = { forward: string } | { answer: ErrorObject };

/** The hooks `relayTauConnection` calls; each calls back in the order the messages arrived. */
export interface TauSessionGate {
  /** A valid client request, before it is forwarded. */
  request(request: TauRequest, text: string, decide: (decision: GateDecision) => void): void;
  /** A valid upstream message (a response: with the method it answers), before it is relayed; `deliver` is not called for a dropped one. */
  message(message: Record<string, unknown>, text: string, method: string | undefined, deliver: (text: string) => void): void;
}

/** Client requests waiting for their access check, at most. */
const MAX_WAITING_REQUESTS = 1000;

/** Messages held while a `session.create` is open (they may belong to the new session). */
const MAX_HELD_MESSAGES = 1000;

/** Tau's answer for a session it does not have (the embedded host's words; spec §3: `data: { sessionId }`). */
export const sessionNotFound = (sessionId: string): ErrorObject => ({ code: "not_found", message: "session not found", data: { sessionId } });

/** One `/tau` connection acting for one tenant. */
export class TauTenantGate implements TauSessionGate {
  /** Sessions this connection may see: checked, or created through it. */
  private readonly visible = new Set<string>();
  private inbound: Promise<void> = Promise.resolve();
  private outbound: Promise<void> = Promise.resolve();
  private openCreates = 0;
  /** Requests queued on `inbound` and not yet decided. */
  private waiting = 0;
  /** Upstream messages queued on `outbound` and not yet relayed (or dropped). */
  private relaying = 0;
  private held: Array<{ sessionId: string; text: string }> = [];
  /** Upstream messages not relayed because they were about sessions the tenant may not see. */
  dropped = 0;

  constructor(
    readonly tenant: string,
    private readonly tenants: SessionTenants,
    private readonly log: Log = () => undefined,
  ) {}

  request(request: TauRequest, text: string, decide: (decision: GateDecision) => void): void {
    // Nothing queued ahead and no owner to look up (the common case: a session already checked):
    // decided now, as promise hops per request would cost more than the check itself.
    if (this.waiting === 0) {
      let decision: GateDecision | undefined;
      try {
        decision = this.decideWithoutLookup(request, text);
      } catch (err) {
        this.log("error", "tenant check failed", { error: String(err) });
        return;
      }
      if (decision) return this.safely(() => decide(decision));
    }
    if (this.waiting >= MAX_WAITING_REQUESTS) {
      // Owners are being looked up slowly (or not at all): refuse rather than queue without bound.
      decide({ answer: { code: "busy", message: `more than ${MAX_WAITING_REQUESTS} requests of this connection are waiting for the gateway's access check; retry later` } });
      return;
    }
    this.waiting++;
    this.inbound = this.inbound
      .then(() => this.decide(request, text))
      .then(
        (decision) => this.safely(() => decide(decision)),
        (err: unknown) => this.log("error", "tenant check failed", { error: String(err) }),
      )
      .finally(() => this.waiting--);
  }

  message(message: Record<string, unknown>, text: string, method: string | undefined, deliver: (text: string) => void): void {
    // Nothing queued ahead and no owner to look up (a delta of a visible session, most of a stream;
    // a session list of known owners): relayed now, without promise hops per message. Otherwise
    // behind the queue, so order is kept.
    if (this.relaying === 0 && !this.needsLookups(message, method)) {
      try {
        this.relayWithoutLookups(message, text, method, deliver);
      } catch (err) {
        this.log("error", "tenant filter failed", { error: String(err) });
      }
      return;
    }
    this.relaying++;
    this.outbound = this.outbound
      .then(() => this.relay(message, text, method, deliver))
      .catch((err: unknown) => this.log("error", "tenant filter failed", { error: String(err) }))
      .finally(() => this.relaying--);
  }

  private async decide(request: TauRequest, text: string): Promise<GateDecision> {
    // May repeat a check `request` made: without a decision it changed nothing (only session.create counts, and it always decides).
    const decision = this.decideWithoutLookup(request, text);
    if (decision) return decision;
    const sessionId = (request.params as Record<string, unknown>).sessionId as string;
    let owner: SessionOwner;
    try {
      owner = await this.tenants.owner(sessionId);
    } catch (err) {
      this.log("warn", "cannot learn the owner of a session", { sessionId, error: errorText(err) });
      return { answer: { code: "internal_error", message: `the gateway cannot check access to session ${sessionId} right now` } };
    }
    // Unknown to the host: let the host answer (its own not_found, word for word).
    if (!owner.exists) return { forward: text };
    if (owner.tenant !== this.tenant) return { answer: sessionNotFound(sessionId) };
    this.visible.add(sessionId);
    return { forward: text };
  }

  /** The decision when it needs no owner lookup; undefined when the request names a session not yet checked. */
  private decideWithoutLookup(request: TauRequest, text: string): GateDecision | undefined {
    const params = request.params as Record<string, unknown>;
    if (request.method === "session.create") {
      const attributes = params.attributes as Record<string, string>;
      if (Object.hasOwn(attributes, ATTR_TENANT)) {
        return { answer: { code: "invalid_params", message: `session.create params.attributes.${ATTR_TENANT} is set by the gateway from the client's credentials` } };
      }
      this.openCreates++;
      // The one rewritten request: everything but the added attribute is the client's own.
      const envelope = JSON.parse(text) as Record<string, unknown>;
      return { forward: JSON.stringify({ ...envelope, params: { ...params, attributes: { ...attributes, [ATTR_TENANT]: this.tenant } } }) };
    }
    const sessionId = params.sessionId;
    if (typeof sessionId !== "string" || this.visible.has(sessionId)) return { forward: text };
    return undefined;
  }

  private async relay(message: Record<string, unknown>, text: string, method: string | undefined, deliver: (text: string) => void): Promise<void> {
    if (this.needsLookups(message, method)) return this.send(deliver, await this.filteredList(message, text));
    this.relayWithoutLookups(message, text, method, deliver);
  }

  /** A successful `session.list` answer naming a session this connection has not seen and whose owner is not known yet. */
  private needsLookups(message: Record<string, unknown>, method: string | undefined): boolean {
    if (!isSessionList(message, method)) return false;
    const { sessions } = message.result as SessionListResult;
    return sessions.some((s) => !this.visible.has(s.sessionId) && this.tenants.knownOwner(s.sessionId) === NOT_KNOWN);
  }

  /** Every upstream message whose owners are known: relayed, held or dropped, all at once. */
  private relayWithoutLookups(message: Record<string, unknown>, text: string, method: string | undefined, deliver: (text: string) => void): void {
    if (message.type === "response") {
      if (method === "session.create") return this.created(message, text, deliver);
      if (isSessionList(message, method)) return this.send(deliver, this.listOfKnownOwners(message, text));
      return this.send(deliver, text);
    }
    const sessionId = message.sessionId;
    if (typeof sessionId !== "string" || this.visible.has(sessionId)) return this.send(deliver, text);
    if (this.openCreates > 0) {
      // Tau promises no order between a response and the deltas it caused: this may be the new session's.
      if (this.held.length >= MAX_HELD_MESSAGES) {
        this.held.shift();
        this.dropped++;
      }
      this.held.push({ sessionId, text });
      return;
    }
    this.dropped++;
    this.log("debug", "dropped a message about a session this tenant may not see", { type: message.type, sessionId });
  }

  private created(message: Record<string, unknown>, text: string, deliver: (text: string) => void): void {
    this.openCreates = Math.max(0, this.openCreates - 1);
    const result = message.result as { sessionId?: unknown } | undefined;
    if (message.ok === true && typeof result?.sessionId === "string") {
      this.tenants.remember(result.sessionId, this.tenant);
      this.visible.add(result.sessionId);
      const mine = this.held.filter((h) => h.sessionId === result.sessionId);
      this.held = this.held.filter((h) => h.sessionId !== result.sessionId);
      for (const h of mine) this.send(deliver, h.text);
    }
    if (this.openCreates === 0) {
      this.dropped += this.held.length;
      this.held = [];
    }
    this.send(deliver, text);
  }

  /** `filteredList` when every session listed is visible or of a known owner (see `needsLookups`). */
  private listOfKnownOwners(message: Record<string, unknown>, text: string): string {
    const { sessions } = message.result as SessionListResult;
    return listText(
      message,
      text,
      sessions.map((s) => this.visible.has(s.sessionId) || this.tenants.knownOwner(s.sessionId) === this.tenant),
    );
  }

  /** The `session.list` answer the tenant may see: `text` itself when every session listed is its own. */
  private async filteredList(message: Record<string, unknown>, text: string): Promise<string> {
    const { sessions } = message.result as SessionListResult;
    const keep = await Promise.all(
      sessions.map(async (s) => {
        if (this.visible.has(s.sessionId)) return true;
        try {
          const owner = await this.tenants.owner(s.sessionId);
          return owner.exists && owner.tenant === this.tenant;
        } catch (err) {
          // Fail closed: a session whose owner is unknown right now is not listed.
          this.log("warn", "cannot learn the owner of a listed session", { sessionId: s.sessionId, error: errorText(err) });
          return false;
        }
      }),
    );
    return listText(message, text, keep);
  }

  /** Delivers one message; a failure is logged and does not stop the messages after it. */
  private send(deliver: (text: string) => void, text: string): void {
    try {
      deliver(text);
    } catch (err) {
      this.logFailure(err);
    }
  }

  private safely(fn: () => void): void {
    try {
      fn();
    } catch (err) {
      this.logFailure(err);
    }
  }

  private logFailure(err: unknown): void {
    this.log("error", "error in the Tau passthrough", { error: err instanceof Error ? (err.stack ?? err.message) : String(err) });
  }
}

/** A successful `session.list` answer: it lists only the sessions the tenant may see. */
function isSessionList(message: Record<string, unknown>, method: string | undefined): boolean {
  return message.type === "response" && method === "session.list" && message.ok === true;
}

/** A `session.list` answer with the sessions `keep` marks; `text` itself when it keeps them all. */
function listText(message: Record<string, unknown>, text: string, keep: boolean[]): string {
  // Nothing to hide: the host's own text, as for every other message (and no re-serialization).
  if (keep.every(Boolean)) return text;
  const { sessions } = message.result as SessionListResult;
  return JSON.stringify({ ...message, result: { ...(message.result as object), sessions: sessions.filter((_, i) => keep[i]) } });
}
