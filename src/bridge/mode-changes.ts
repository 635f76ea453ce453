import type { ApprovalModeName, SessionInteractions } from "./interactions/index.js";
import type { SessionPrincipal, SessionRoles } from "./session-roles.js";

/**
 * Whether a client's choice of approval mode for a session it uses is to be applied (Codex's
 * `approvalPolicy` on thread/resume and turn/start, ACP's session/set_mode): yes when its principal
 * may change the mode (an owner or controller: the mode decides whether later calls are asked at
 * all); when it may not (an observer), a choice that restates the mode in force changes nothing and
 * is left as it is (clients restate their own default unasked: Zed its saved mode as it loads a
 * session, a Codex client its approvalPolicy), and one that would change it is refused with the core's
 * `forbidden` refusal, in the dialect's words.
 */
export async function modeChangeAllowed(
  roles: Pick<SessionRoles, "allows" | "require">,
  interactions: Pick<SessionInteractions, "mode" | "refreshSettings">,
  sessionId: string,
  principal: SessionPrincipal | undefined,
  mode: ApprovalModeName,
  method: string,
): Promise<boolean> {
  if (await roles.allows(sessionId, principal, "setMode")) return true;
  // The mode in force, as every replica holds it, not as this one last heard.
  await interactions.refreshSettings();
  if (mode !== interactions.mode) await roles.require(sessionId, principal, "setMode", method);
  return false;
}
