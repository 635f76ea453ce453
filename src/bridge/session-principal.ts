/**
 * Who a call authenticated as, as the session core needs to know it (a token of the tokens file):
 * what roles (session-roles.ts) and the votes on approvals (interactions/approval-votes.ts) hold
 * to. Its own file, importing nothing, so the interactions can name it without the roles' module.
 */
/** Who a call authenticated as, as the session core needs to know it (a token of the tokens file). */
export interface SessionPrincipal {
  /** The token's id in the tokens file. */
  readonly tokenId: string;
  /** An operator token may grant and revoke roles in any session of its tenant. */
  readonly operator?: boolean;
  /** Its role in a session of its tenant that it neither created nor was granted a role in (default controller). */
  readonly sessionRole?: "controller" | "observer";
}
