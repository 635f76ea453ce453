import type { SessionCancelParams, SessionPromptParams, SessionPromptResult } from "../../../generated/acp-v1.js";
import type { AcpMethodContext } from "../context.js";
import { promptText } from "../prompt-text.js";
import { promptTurnId } from "../relay-positions.js";
import { linkedSession } from "../session-access.js";

/** session/prompt: one Tau turn (`session.submit`), answered with how it stopped once its updates are out. */
export async function prompt(ctx: AcpMethodContext, params: SessionPromptParams): Promise<SessionPromptResult> {
  const link = linkedSession(ctx, params.sessionId);
  await ctx.services.core.roles.require(link.sessionId, ctx.client.peer.principal, link.record.hub.running ? "steer" : "prompt", "session/prompt");
  const text = promptText(params.prompt);
  return { stopReason: await link.prompt(text, promptTurnId(params)) };
}

/**
 * session/cancel (a notification): interrupts the connection's turn in that session, if it has one;
 * naming a sub-agent of a session the connection has (the draft's child session id, on its card),
 * it interrupts that sub-agent alone, as the draft lets a client cancel a child's work.
 */
export function cancel(ctx: AcpMethodContext, params: SessionCancelParams): void {
  const { principal } = ctx.client.peer;
  if (!principal) return cancelNow(ctx, params);
  // A notification has no answer: an observer's cancel is refused in the log, and interrupts nothing.
  ctx.services.core.roles.require(params.sessionId, principal, "interrupt", "session/cancel").then(
    () => cancelNow(ctx, params),
    (error: unknown) => ctx.services.log?.("info", "session/cancel refused", { sessionId: params.sessionId, error: error instanceof Error ? error.message : String(error) }),
  );
}

function cancelNow({ services, client }: AcpMethodContext, params: SessionCancelParams): void {
  const link = services.links.get(client, params.sessionId);
  if (link) {
    void link.cancel();
    return;
  }
  for (const other of services.links.ofClient(client)) {
    if (!other.record.hub.snapshot?.agents[params.sessionId]) continue;
    other.interruptSubagent(params.sessionId).catch((error: unknown) =>
      services.log?.("warn", "interrupting a sub-agent failed", { sessionId: other.sessionId, subagentId: params.sessionId, error: String(error) }),
    );
    return;
  }
}
