import type { ApprovalMode, SessionMode } from "../../../generated/ask-v1.0.js";

/**
 * How a session treats the gateway's command tools, derived from the `mode` given to
 * session/create (ask-protocol §10): `on_request` asks a person, `auto` and `never` run them
 * without asking, `plan` refuses them until a plan has been approved and then asks like
 * `on_request`. Tau's own host tools are never gated by any of these.
 */
export type ApprovalModeName = "on_request" | "auto" | "never" | "plan";

const BY_SESSION_MODE: Record<SessionMode, ApprovalModeName> = {
  on_request: "on_request",
  build: "on_request",
  edit: "on_request",
  auto: "auto",
  never: "never",
  off: "never",
  yolo: "never",
  full_access: "never",
  plan: "plan",
};

/** The approval mode of a session/create `mode`; absent or unknown values ask (the safe default). */
export function approvalModeFor(sessionMode: string | undefined): ApprovalModeName {
  if (sessionMode === undefined || !Object.hasOwn(BY_SESSION_MODE, sessionMode)) return "on_request";
  return BY_SESSION_MODE[sessionMode as SessionMode];
}

/** The canonical approval mode a session reports (workspace/readState): plan still requires approval. */
export function canonicalApprovalMode(mode: ApprovalModeName): ApprovalMode {
  switch (mode) {
    case "never":
      return "off";
    case "auto":
      return "auto";
    case "on_request":
    case "plan":
      return "require";
  }
}
