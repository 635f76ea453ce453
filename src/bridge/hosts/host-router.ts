import type { ClientRequests, SessionListResult } from "../../../generated/tau-v18.js";
import type { Log } from "../../shared/log.js";
import type { PlacementStore } from "../../store/placement.js";
import { TauResponseError, UpstreamUnavailableError } from "../../tau/upstream.js";
import type { TauHostLink } from "./tau-host-link.js";

/**
 * A session id Tau's schema refuses (empty, or whitespace only) names no session. Dialects whose
 * own schema lets such an id through (ACP's SessionId is any string) get "not found" for it, as
 * for any other unknown session, and the request never reaches Tau invalid.
 */
export function namesNoSession(sessionId: string): boolean {
  return !/\S/.test(sessionId);
}

/** What Tau answers for a session it does not have, made here for an id that cannot name one. */
export function noSuchSession(method: string, sessionId: string): TauResponseError {
  return new TauResponseError(method, "not_found", "session not found", { sessionId });
}

/** One host's connection state, for /readyz and the metrics. */
export interface HostState {
  key: string;
  connected: boolean;
  /** Why it is not usable (undefined while connected). */
  unavailableReason?: string;
}

/** Sessions whose host is remembered in this process besides the store (oldest forgotten first). */
const MAX_REMEMBERED = 100_000;

/**
 * The Tau requests of every dialect, sent to the right host. A request naming a session goes to
 * the host the session lives on — the one holding its record, else the one remembered, else the one
 * the placement store names, else the one that answers `session.snapshot` for it (then placed
 * there). `session.create` goes to the least-loaded host that is connected; `session.list` asks
 * every connected host and joins their answers. A host that is down fails only the requests for
 * its own sessions (UpstreamUnavailableError, which every dialect reports as its upstream error).
 *
 * With one host every request goes straight to it: exactly the single-upstream gateway.
 */
export class HostRouter {
  private readonly byKey: ReadonlyMap<string, TauHostLink>;
  /** Where sessions were last seen (lists, lookups, creates): saves a store read per request. */
  private readonly remembered = new Map<string, TauHostLink>();
  private readonly lookups = new Map<string, Promise<TauHostLink>>();
  /** Creates on their way to each host, counted as load so concurrent creates spread. */
  private readonly creating = new Map<string, number>();

  constructor(
    readonly links: readonly TauHostLink[],
    private readonly placement: PlacementStore,
    private readonly log?: Log,
  ) {
    if (links.length === 0) throw new Error("at least one Tau host is needed");
    this.byKey = new Map(links.map((link) => [link.key, link]));
  }

  /** Like TauUpstream.request, on the host the request belongs to. */
  async request<M extends keyof ClientRequests>(
    method: M,
    params: ClientRequests[M]["params"],
    options: { signal?: AbortSignal } = {},
  ): Promise<ClientRequests[M]["result"]> {
    const named = (params as { sessionId?: unknown }).sessionId;
    if (typeof named === "string" && namesNoSession(named)) throw noSuchSession(method, named);
    const only = this.links.length === 1 ? this.links[0]! : undefined;
    if (only) return only.upstream.request(method, params, options);
    if (method === "session.create") return (await this.create(params as ClientRequests["session.create"]["params"], options)) as ClientRequests[M]["result"];
    if (method === "session.list") return (await this.list(options)) as ClientRequests[M]["result"];
    const sessionId = (params as { sessionId?: unknown }).sessionId;
    const link = typeof sessionId === "string" ? await this.hostFor(sessionId, method) : this.connectedLinks()[0];
    if (!link) throw new UpstreamUnavailableError(`${method}: no Tau host is connected`);
    return link.upstream.request(method, params, options);
  }

  /** The host of a session, found (and placed) if it is not known yet; not_found when no host has it. */
  async hostFor(sessionId: string, method = "session.snapshot"): Promise<TauHostLink> {
    const known = this.knownHost(sessionId);
    if (known) return known;
    const placed = this.byKey.get((await this.placement.hostOf(sessionId)) ?? "");
    if (placed) return this.remember(sessionId, placed);
    let lookup = this.lookups.get(sessionId);
    if (!lookup) {
      lookup = this.lookUp(sessionId, method);
      this.lookups.set(sessionId, lookup);
      void lookup.then(
        () => this.lookups.delete(sessionId),
        () => this.lookups.delete(sessionId),
      );
    }
    return lookup;
  }

  /** The host of a session when it is known without asking anyone (always, with one host). */
  knownHost(sessionId: string): TauHostLink | undefined {
    if (this.links.length === 1) return this.links[0];
    return this.links.find((link) => link.sessions.get(sessionId) || link.sessions.isClosed(sessionId)) ?? this.remembered.get(sessionId);
  }

  /** The session was closed: it no longer counts towards its host's load. */
  released(sessionId: string): void {
    if (this.links.length === 1) return;
    this.placement.release(sessionId).catch((error: unknown) => this.log?.("warn", "could not release a session's placement", { sessionId, error: String(error) }));
  }

  // --- health -------------------------------------------------------------------------------

  /** Some host can take new sessions. */
  get connected(): boolean {
    return this.links.some((link) => link.upstream.connected);
  }

  get unavailableReason(): string | undefined {
    if (this.connected) return undefined;
    if (this.links.length === 1) return this.links[0]!.upstream.unavailableReason;
    return `no Tau host is connected (${this.hosts.map((h) => `${h.key}: ${h.unavailableReason ?? "not connected"}`).join("; ")})`;
  }

  /** After each host's successful (re)initialize. */
  onConnected(listener: (event: { reconnected: boolean; host: string }) => void): () => void {
    const stops = this.links.map((link) => link.upstream.onConnected(({ reconnected }) => listener({ reconnected, host: link.key })));
    return () => stops.forEach((stop) => stop());
  }

  get hosts(): HostState[] {
    return this.links.map((link) => ({ key: link.key, connected: link.upstream.connected, unavailableReason: link.upstream.unavailableReason }));
  }

  get openRequests(): number {
    return this.links.reduce((sum, link) => sum + link.upstream.openRequests, 0);
  }

  get stats(): { reconnects: number; invalidMessages: number } {
    const total = { reconnects: 0, invalidMessages: 0 };
    for (const link of this.links) {
      const { reconnects, invalidMessages } = link.upstream.stats;
      total.reconnects += reconnects;
      total.invalidMessages += invalidMessages;
    }
    return total;
  }

  // --- routing ------------------------------------------------------------------------------

  private connectedLinks(): TauHostLink[] {
    return this.links.filter((link) => link.upstream.connected);
  }

  /** On the least-loaded connected host (the first of equals, in the order the hosts were given), then placed there. */
  private async create(params: ClientRequests["session.create"]["params"], options: { signal?: AbortSignal }): Promise<ClientRequests["session.create"]["result"]> {
    const candidates = this.connectedLinks();
    if (candidates.length === 0) throw new UpstreamUnavailableError("session.create: no Tau host is connected");
    const loads = await Promise.all(candidates.map(async (link) => (await this.placement.load(link.key)) + (this.creating.get(link.key) ?? 0)));
    const link = candidates[loads.indexOf(Math.min(...loads))]!;
    this.creating.set(link.key, (this.creating.get(link.key) ?? 0) + 1);
    try {
      const result = await link.upstream.request("session.create", params, options);
      await this.place(result.sessionId, link);
      return result;
    } finally {
      this.creating.set(link.key, this.creating.get(link.key)! - 1);
    }
  }

  /** Every connected host's sessions; a host that is down (or drops while answering) is left out. */
  private async list(options: { signal?: AbortSignal }): Promise<SessionListResult> {
    const candidates = this.connectedLinks();
    const answers = await Promise.allSettled(candidates.map((link) => link.upstream.request("session.list", {}, options)));
    const sessions: SessionListResult["sessions"] = [];
    let answered = false;
    for (const [index, answer] of answers.entries()) {
      if (answer.status === "rejected") {
        if (answer.reason instanceof UpstreamUnavailableError) continue;
        throw answer.reason;
      }
      answered = true;
      for (const session of answer.value.sessions) {
        if (this.knownHost(session.sessionId) === undefined) this.remember(session.sessionId, candidates[index]!);
        sessions.push(session);
      }
    }
    if (!answered) throw new UpstreamUnavailableError("session.list: no Tau host is connected");
    return { sessions };
  }

  /**
   * Asks every connected host for the session. Not found anywhere while a host is down: the session
   * may be on that host, so the answer is "unavailable", never "not found".
   */
  private async lookUp(sessionId: string, method: string): Promise<TauHostLink> {
    const candidates = this.connectedLinks();
    const answers = await Promise.allSettled(candidates.map((link) => link.upstream.request("session.snapshot", { sessionId })));
    const found = answers.findIndex((answer) => answer.status === "fulfilled");
    if (found >= 0) {
      const link = candidates[found]!;
      await this.place(sessionId, link);
      return link;
    }
    const failure = answers.find((answer) => answer.status === "rejected" && !(answer.reason instanceof TauResponseError && answer.reason.code === "not_found"));
    if (failure?.status === "rejected" && !(failure.reason instanceof UpstreamUnavailableError)) throw failure.reason;
    if (failure || candidates.length < this.links.length) {
      throw new UpstreamUnavailableError(`${method}: session ${sessionId} is on none of the connected Tau hosts, and a host that is down may hold it`);
    }
    throw new TauResponseError(method, "not_found", `session ${sessionId} not found`);
  }

  /** Placed in the store (shared with other replicas) and remembered here; a store that fails is logged, the session still served. */
  private async place(sessionId: string, link: TauHostLink): Promise<void> {
    this.remember(sessionId, link);
    try {
      await this.placement.place(sessionId, link.key);
    } catch (error) {
      this.log?.("warn", "could not store a session's placement", { sessionId, host: link.key, error: String(error) });
    }
  }

  private remember(sessionId: string, link: TauHostLink): TauHostLink {
    this.remembered.delete(sessionId);
    if (this.remembered.size >= MAX_REMEMBERED) this.remembered.delete(this.remembered.keys().next().value!);
    this.remembered.set(sessionId, link);
    return link;
  }
}
