import type {
  ProgressToken,
  TauAnswerArguments,
  TauAnswerOutput,
  TauHistoryArguments,
  TauHistoryOutput,
  TauInterruptArguments,
  TauInterruptOutput,
  TauReplyArguments,
  TauSessionsArguments,
  TauSessionsOutput,
  TauStartArguments,
  TauStartOutput,
} from "../../generated/mcp-v2025-11-25.js";
import type { InteractionRecord } from "../../generated/ask-v1.0.js";
import { InteractionError, type ApprovalAnswered } from "../bridge/interactions/index.js";
import { createAttributes } from "../bridge/session-attributes.js";
import type { SessionRecord } from "../bridge/session-registry.js";
import type { TauToolName } from "../registry/mcp/index.js";
import { callKey } from "./client-state.js";
import type { McpMethodContext } from "./context.js";
import { ToolFailure } from "./errors.js";
import { tenantSessions, toolSession } from "./session-access.js";
import { sessionMeta, sessionUri } from "../shared/session-references.js";
import { transcriptMessages } from "./transcript.js";
import { runTurn } from "./turn-run.js";

/** What a tool answers: the text for the model and the structured content its outputSchema describes. */
export interface ToolAnswer<Output> {
  text: string;
  structured: Output;
}

type ToolHandler<Args, Output> = (ctx: McpMethodContext, args: Args, progressToken: ProgressToken | undefined) => Promise<ToolAnswer<Output>>;

/** tau: a new session rooted at cwd (within the caller's workspace roots), and its first turn. */
async function start(ctx: McpMethodContext, args: TauStartArguments, progressToken: ProgressToken | undefined): Promise<ToolAnswer<TauStartOutput>> {
  const { core, workspaces } = ctx.services;
  const { tenant } = ctx.client.peer;
  const placed = workspaces.place(args.cwd, tenant);
  if (!placed.ok) throw new ToolFailure(`cwd: ${placed.reason}`);
  const { sessionId } = await core.hosts.request("session.create", {
    executionEnvironment: { kind: "local", cwd: placed.path },
    attributes: createAttributes(tenant, args.approvalMode ?? "on_request"),
    ...(args.reasoning ? { reasoning: args.reasoning } : {}),
  });
  await core.roles.created(sessionId, ctx.client.peer.principal);
  const record = await core.sessions.open(sessionId);
  return turn(ctx, record, args.prompt, progressToken);
}

/** tau-reply: another turn of a session of the caller's, whoever started it. */
async function reply(ctx: McpMethodContext, args: TauReplyArguments, progressToken: ProgressToken | undefined): Promise<ToolAnswer<TauStartOutput>> {
  const record = await toolSession(ctx, args.sessionId);
  await ctx.services.core.roles.require(record.sessionId, ctx.client.peer.principal, record.hub.running ? "steer" : "prompt", "tau-reply");
  return turn(ctx, record, args.prompt, progressToken);
}

/**
 * One turn for the calling connection, which watches the session from now on (it is asked about
 * what the session waits for). With a progress token, each step is a notifications/progress: the
 * reply as it streams, and what the turn waits for. notifications/cancelled naming the call
 * interrupts the turn.
 */
/** How long the answer of a turn that streamed progress waits after its last progress notification. */
const PROGRESS_SETTLE_MS = 25;

async function turn(ctx: McpMethodContext, record: SessionRecord, text: string, progressToken: ProgressToken | undefined): Promise<ToolAnswer<TauStartOutput>> {
  const { client, services } = ctx;
  services.watches.watch(client, record);
  let progress = 0;
  const key = ctx.requestId === undefined ? undefined : callKey(ctx.requestId);
  try {
    const report = await runTurn({
      record,
      upstream: services.core.hosts,
      text,
      progress:
        progressToken === undefined
          ? undefined
          : (message) => {
              progress += Math.max(1, message.length);
              client.peer.notify("notifications/progress", { progressToken, progress, message, _meta: sessionMeta(record.sessionId) }, ctx.requestId);
            },
      cancellable: (interrupt) => {
        if (key !== undefined) client.calls.set(key, { id: ctx.requestId!, sessionId: record.sessionId, cancel: interrupt });
      },
      log: services.log,
    });
    // The answer in a read of its own after the last progress: an SDK client hands notifications to
    // their handler a microtask late, and drops one that shares a read with the answer (its answer
    // handler forgets the progress token first). One loop turn here is not enough when the client
    // is slow to read (a busy machine: both land in its pipe before it reads); a short pause at the
    // end of a turn costs nothing a person notices and lets the client read the progress first.
    if (progress > 0) await new Promise((resolve) => setTimeout(resolve, PROGRESS_SETTLE_MS));
    return { text: report.error ? `${report.text}\n\n[${report.status}: ${report.error}]`.trim() : report.text, structured: report };
  } finally {
    if (key !== undefined) client.calls.delete(key);
  }
}

async function sessions(ctx: McpMethodContext, args: TauSessionsArguments): Promise<ToolAnswer<TauSessionsOutput>> {
  const found = await tenantSessions(ctx, args.cwd);
  const listed = found.map((s) => ({ sessionId: s.sessionId, cwd: s.cwd, updatedAt: new Date(s.at).toISOString(), running: s.running, uri: sessionUri(s.sessionId) }));
  const text = listed.length ? listed.map((s) => `${s.sessionId}  ${s.cwd}  ${s.updatedAt}${s.running ? "  (running)" : ""}`).join("\n") : "No sessions.";
  return { text, structured: { sessions: listed } };
}

async function history(ctx: McpMethodContext, args: TauHistoryArguments): Promise<ToolAnswer<TauHistoryOutput>> {
  const record = await toolSession(ctx, args.sessionId);
  const messages = record.hub.snapshot ? transcriptMessages(record.hub.snapshot) : [];
  const text = messages.map((m) => `${m.role}: ${m.text}`).join("\n\n") || "No messages yet.";
  return { text, structured: { sessionId: record.sessionId, running: record.hub.running, messages } };
}

async function interrupt(ctx: McpMethodContext, args: TauInterruptArguments): Promise<ToolAnswer<TauInterruptOutput>> {
  const record = await toolSession(ctx, args.sessionId);
  await ctx.services.core.roles.require(record.sessionId, ctx.client.peer.principal, "interrupt", "tau-interrupt");
  if (!record.hub.running) return { text: "No turn is running.", structured: { sessionId: record.sessionId, interrupted: false } };
  await ctx.services.core.hosts.request("session.interrupt", { sessionId: record.sessionId });
  return { text: "Interrupted.", structured: { sessionId: record.sessionId, interrupted: true } };
}

type Pending = { id: string; kind: "approval" | "question" | "plan" };

/** tau-answer: decides an approval, a question or a plan of a session of the caller's; the first answer of any client wins. */
async function answer(ctx: McpMethodContext, args: TauAnswerArguments): Promise<ToolAnswer<TauAnswerOutput>> {
  const record = await toolSession(ctx, args.sessionId);
  await ctx.services.core.roles.require(record.sessionId, ctx.client.peer.principal, "answer", "tau-answer");
  const shared = record.interactions.shared;
  const [records, plans] = await Promise.all([shared.list(), shared.plans()]);
  const pending: Pending[] = [...records.map((r: InteractionRecord) => ({ id: r.id, kind: r.kind === "approval" ? ("approval" as const) : ("question" as const) })), ...plans.map((p) => ({ id: p.id, kind: "plan" as const }))];
  const target = args.interactionId === undefined ? pending[0] : pending.find((p) => p.id === args.interactionId);
  if (!target) {
    throw new ToolFailure(args.interactionId === undefined ? `session ${record.sessionId} waits for nothing` : `${args.interactionId} is not pending in session ${record.sessionId} (decided already, or unknown)`);
  }
  const { action } = args;
  let vote: TauAnswerOutput["vote"];
  const mismatch = () => new ToolFailure(`${action} does not answer ${target.kind === "question" ? "a question (respond or decline)" : `an ${target.kind} (approve, approve_for_session or reject)`}`);
  try {
    if (target.kind === "question") {
      if (action === "respond") {
        if (args.text === undefined) throw new ToolFailure("respond needs the answer in text");
        await shared.respond(target.id, args.text);
      } else if (action === "decline") await shared.decline(target.id, args.text ?? "declined");
      else throw mismatch();
    } else if (target.kind === "approval") {
      // The answer names its principal: under a policy's `require` rule it is that principal's vote.
      const { principal } = ctx.client.peer;
      if (action === "approve" || action === "approve_for_session") vote = voteOf(await shared.approve(target.id, action === "approve" ? "once" : "session", principal));
      else if (action === "reject") vote = voteOf(await shared.reject(target.id, args.text, principal));
      else throw mismatch();
    } else if (action === "approve" || action === "approve_for_session") await shared.decidePlan(target.id, { action: "approve" });
    else if (action === "reject") await shared.decidePlan(target.id, { action: "reject", ...(args.text ? { feedback: args.text } : {}) });
    else throw mismatch();
  } catch (error) {
    if (error instanceof InteractionError) throw new ToolFailure(error.message);
    throw error;
  }
  const said = `${action}: ${target.kind} ${target.id}`;
  const structured = { sessionId: record.sessionId, interactionId: target.id, kind: target.kind, action, ...(vote ? { vote } : {}) };
  if (!vote) return { text: said, structured };
  // One vote of several needed decides nothing: said so, so that no model reads it as the decision.
  const count = vote.approvals === undefined ? `vote sent to the gateway replica holding the call, ${vote.needed} approvers needed` : `vote counted, ${vote.approvals} of ${vote.needed}`;
  return { text: `${said}: ${count}, not yet decided`, structured };
}

/** What tau-answer says of an answer that was one vote and did not decide (nothing for one that decided). */
function voteOf(answered: ApprovalAnswered): TauAnswerOutput["vote"] {
  if (answered.kind === "vote") return { approvals: answered.have, needed: answered.need };
  if (answered.kind === "sent") return { needed: answered.need };
  return undefined;
}

/** Every tool of the registry and its handler: a tool missing here does not compile. */
export const TOOL_HANDLERS: { [K in TauToolName]: ToolHandler<never, unknown> } = {
  tau: start as ToolHandler<never, unknown>,
  "tau-reply": reply as ToolHandler<never, unknown>,
  "tau-sessions": sessions as ToolHandler<never, unknown>,
  "tau-history": history as ToolHandler<never, unknown>,
  "tau-interrupt": interrupt as ToolHandler<never, unknown>,
  "tau-answer": answer as ToolHandler<never, unknown>,
};
