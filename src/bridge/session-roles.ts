import type { Deciders, SessionRole, SessionRoleRecord, SessionRoleStore } from "../store/session-roles.js";
import type { Log } from "../shared/log.js";
import { SingleFlight } from "../shared/single-flight.js";
import { SessionError } from "./session-error.js";
import type { SessionPrincipal } from "./session-principal.js";

export type { Deciders, SessionRole } from "../store/session-roles.js";
export type { SessionPrincipal } from "./session-principal.js";

/**
 * Roles per principal and session (issue 37's "Roles"): the principal that creates a session owns
 * it; the owner (or an operator token) grants other principals `owner`, `controller` or `observer`;
 * any other principal of the session's tenant has its default (`sessionRole` of its tokens-file
 * entry, controller unless said otherwise). One check for every dialect: `require` refuses with a
 * `forbidden` SessionError, which each dialect words as its own error. A caller without a principal
 * (a gateway without tokens, the stdio commands, the Ask socket) is never refused an action: it
 * has no identity to hold to a role. It decides no approval whose rule names its deciders (or needs
 * several distinct approvers): none of them can be it.
 */


/** What a call does to a session, for the check. */
export type SessionAction = "prompt" | "steer" | "interrupt" | "close" | "answer" | "setMode" | "grant" | "readReceipts";

/** What an operator token may do in any session it reaches, whatever its role there: administer roles, read receipts. */
const OPERATORS_MAY: ReadonlySet<SessionAction> = new Set(["grant", "readReceipts"]);

const ALLOWED: Readonly<Record<SessionRole, ReadonlySet<SessionAction>>> = {
  // The receipts (who voted, who decided, what ran) are the owner's to read, as granting is (and an operator's).
  owner: new Set(["prompt", "steer", "interrupt", "close", "answer", "setMode", "grant", "readReceipts"]),
  // Changing the approval mode decides how later calls are approved (auto: unasked): a controller's, as answering is.
  controller: new Set(["prompt", "steer", "interrupt", "close", "answer", "setMode"]),
  observer: new Set(),
};

/** How each action reads in a refusal: "observers cannot prompt". */
const VERB: Readonly<Record<SessionAction, string>> = {
  prompt: "prompt",
  steer: "steer",
  interrupt: "interrupt",
  close: "close the session",
  answer: "answer approvals or questions",
  setMode: "change the session's approval mode",
  grant: "grant or revoke roles",
  readReceipts: "read the session's receipts",
};

const ARTICLE: Readonly<Record<SessionRole, string>> = { owner: "an owner", controller: "a controller", observer: "an observer" };

/** One principal's role in a session, as `session/roles` lists it. */
export interface RoleEntry {
  principal: string;
  role: SessionRole;
}

/** Who may decide one of a session's interactions, as the core knows it (a policy's `require` rule; "any" otherwise). */
export type DecidersLookup = (sessionId: string, interactionId: string) => Promise<Deciders>;

/** Whether only a caller with a principal may decide one of a session's interactions (a `require` rule naming its deciders, or needing several). */
export type PrincipalNeedLookup = (sessionId: string, interactionId: string) => Promise<boolean>;

export class SessionRoles {
  /**
   * What an offer round reads (mayDecideOn): every connection of a session is asked about an
   * interaction at once, each dialect and connection on its own, so their reads of the session's
   * roles and of the interaction's deciders overlap and are made once (a store round trip each on
   * replicas, instead of one per connection).
   */
  private readonly offerReads = { roles: new SingleFlight<SessionRoleRecord>(), deciders: new SingleFlight<Deciders>(), needsPrincipal: new SingleFlight<boolean>() };

  constructor(
    private readonly store: SessionRoleStore,
    /** Read by mayDecideOn: the core's sessions, which hold each pending interaction's deciders. */
    private readonly decidersOf: DecidersLookup = async () => "any",
    /** Read by mayDecideOn for a caller without a principal. */
    private readonly needsPrincipal: PrincipalNeedLookup = async () => false,
  ) {}

  /** Records `principal` as the owner of the session it just created (nothing without a principal). */
  async created(sessionId: string, principal: SessionPrincipal | undefined): Promise<void> {
    if (principal) await this.store.setOwner(sessionId, principal.tokenId);
  }

  /** The principal's role in the session: owner, granted, else its default. */
  async roleOf(sessionId: string, principal: SessionPrincipal): Promise<SessionRole> {
    return roleIn(await this.store.read(sessionId), principal);
  }

  /** Whether the principal may do `action` in the session (always without a principal). */
  async allows(sessionId: string, principal: SessionPrincipal | undefined, action: SessionAction): Promise<boolean> {
    if (!principal) return true;
    if (principal.operator && OPERATORS_MAY.has(action)) return true;
    return ALLOWED[await this.roleOf(sessionId, principal)].has(action);
  }

  /**
   * Resolves when the principal may do `action` in the session; otherwise rejects with the core's
   * `forbidden` refusal, naming the method, the principal, its role and the action:
   * "session/send: principal 'bob' is an observer of this session; observers cannot prompt".
   */
  async require(sessionId: string, principal: SessionPrincipal | undefined, action: SessionAction, method: string): Promise<void> {
    if (!principal) return;
    if (principal.operator && OPERATORS_MAY.has(action)) return;
    const role = await this.roleOf(sessionId, principal);
    if (!ALLOWED[role].has(action)) throw forbidden(method, principal.tokenId, role, action, sessionId);
  }

  /**
   * Whether the principal may decide an interaction of the session: its role lets it answer, and,
   * when the interaction names who decides (a policy's `require` with principals or roles), it is
   * one of them. The one question both the deciding (heard) and each dialect's offer (whether to show
   * a client the choice at all) ask, so what a client is offered is what would count.
   */
  async mayDecide(sessionId: string, principal: SessionPrincipal | undefined, deciders?: Deciders): Promise<boolean> {
    // Without a principal there is no role to hold to, and no identity a rule's deciders could name.
    if (!principal) return !deciders || deciders === "any";
    return decides(await this.roleOf(sessionId, principal), principal, deciders);
  }

  /**
   * Whether the principal may decide the session's interaction `interactionId`, its own deciders
   * included: what each dialect's offer asks (decision-offers.ts). Calls that overlap (one offer
   * round, every connection asked at once) share their reads of the roles and the deciders; the
   * answer itself is checked again, with fresh reads, when it is counted (heard, votes).
   */
  async mayDecideOn(sessionId: string, principal: SessionPrincipal | undefined, interactionId: string): Promise<boolean> {
    const reads = this.offerReads;
    const interaction = JSON.stringify([sessionId, interactionId]);
    if (!principal) return !(await reads.needsPrincipal.read(interaction, () => this.needsPrincipal(sessionId, interactionId)));
    const [record, deciders] = await Promise.all([reads.roles.read(sessionId, () => this.store.read(sessionId)), reads.deciders.read(interaction, () => this.decidersOf(sessionId, interactionId))]);
    return decides(roleIn(record, principal), principal, deciders);
  }

  /**
   * A client's reply to one of the gateway's requests (an approval, a question, a form): the reply
   * itself when the principal may answer, else nothing (`undefined`: it decides nothing and the
   * interaction stays pending for the others), logged as refused.
   */
  async heard<T>(sessionId: string, principal: SessionPrincipal | undefined, reply: T, method: string, log?: Log): Promise<T | undefined> {
    if (reply === undefined || !principal) return reply;
    try {
      const role = await this.roleOf(sessionId, principal);
      if (ALLOWED[role].has("answer")) return reply;
      log?.("info", `${method} reply refused: principal '${principal.tokenId}' is ${ARTICLE[role]} of this session; ${role}s cannot ${VERB.answer}`, {
        sessionId,
        method,
        principal: principal.tokenId,
        role,
      });
    } catch (error) {
      // The roles cannot be read (the store is unreachable): the reply counts for nothing rather than for too much.
      log?.("warn", `${method} reply not counted: the session's roles cannot be read`, { sessionId, error: String(error) });
    }
    return undefined;
  }

  /**
   * Calls `listener` after each role granted or revoked in the session, through this replica or
   * another (and after the store connection came back): what a client is offered follows its role.
   * Resolves with the unsubscribe once listening.
   */
  onChange(sessionId: string, listener: () => void): Promise<() => void> {
    return this.store.onChange(sessionId, listener);
  }

  /** The session's owner and granted roles (the owner first). */
  async list(sessionId: string): Promise<RoleEntry[]> {
    const record = await this.store.read(sessionId);
    const entries: RoleEntry[] = record.owner !== undefined ? [{ principal: record.owner, role: "owner" }] : [];
    for (const [principal, role] of Object.entries(record.granted).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
      if (principal !== record.owner) entries.push({ principal, role });
    }
    return entries;
  }

  /**
   * Grants `role` to `principal` in the session, or revokes its granted role (`null`: back to its
   * default), once `by` may grant there. The creator stays owner whatever is granted to it.
   */
  async setRole(sessionId: string, by: SessionPrincipal | undefined, principal: string, role: SessionRole | null, method: string): Promise<void> {
    await this.require(sessionId, by, "grant", method);
    await this.store.setRole(sessionId, principal, role);
  }
}

/** The principal's role in a session whose roles are `record`: owner, granted, else its default. */
function roleIn(record: SessionRoleRecord, principal: SessionPrincipal): SessionRole {
  if (record.owner === principal.tokenId) return "owner";
  return record.granted[principal.tokenId] ?? principal.sessionRole ?? "controller";
}

/** Whether a principal of `role` decides an interaction with these deciders: its role answers, and it is one of them when they are named. */
function decides(role: SessionRole, principal: SessionPrincipal, deciders: Deciders | undefined): boolean {
  if (!ALLOWED[role].has("answer")) return false;
  if (!deciders || deciders === "any") return true;
  return deciders.principals.includes(principal.tokenId) || deciders.roles.includes(role);
}

/** The refusal of an action the principal's role does not allow. */
export function forbidden(method: string, principal: string, role: SessionRole, action: SessionAction, sessionId: string): SessionError {
  const plural = role === "owner" ? "owners" : `${role}s`;
  return new SessionError("forbidden", `${method}: principal '${principal}' is ${ARTICLE[role]} of this session; ${plural} cannot ${VERB[action]}`, {
    sessionId,
    principal,
    role,
    action,
  });
}
