import type { SessionCancelParams, SessionPromptParams, SessionPromptResult } from "../../../generated/acp-v1.js";
import type { AcpMethodContext } from "../context.js";
import { promptText } from "../prompt-text.js";
import { promptTurnId } from "../relay-positions.js";
import { linkedSession } from "../session-access.js";

/** session/prompt: one Tau turn (`session.submit`), answered with how it stopped once its updates are out. */
export async function prompt(ctx: AcpMethodContext, params: SessionPromptParams): Promise<SessionPromptResult> {
  const link = linkedSession(ctx, params.sessionId);
  const text = promptText(params.prompt);
  return { stopReason: await link.prompt(text, promptTurnId(params)) };
}

/** session/cancel (a notification): interrupts the connection's turn in that session, if it has one. */
export function cancel({ services, client }: AcpMethodContext, params: SessionCancelParams): void {
  void services.links.get(client, params.sessionId)?.cancel();
}
