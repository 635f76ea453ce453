import type { ApprovalDetails, Event, InteractionRecord, InteractionRequestPermissionResult, UserInputDetails } from "../../../generated/ask-v1.0.js";
import type { SessionPrincipal } from "../session-principal.js";
import type { Log } from "../../shared/log.js";
import { decisionOf } from "./approval-votes.js";
import { permissionRequest } from "./permission-request.js";
import type { ReverseRequester } from "./reverse-requester.js";
import type { PendingPlan, SharedAnswers } from "./shared-answers.js";
import { errorText } from "../../shared/unknown-values.js";

/**
 * Asks clients about interactions they were not asked about when the interactions opened, and
 * puts their answers into the interaction store, where the first answer from any replica wins:
 * - on a replica that does not own the session's Tau host, an interaction opened by the owner
 *   reaches this replica's clients only as an event in the shared log (`approval.required`,
 *   `input.requested`);
 * - a client that attaches while interactions are pending is asked about them at once
 *   (`askPending`, see joiner-asking.ts).
 * They are asked as the owner asks its own — the reverse requests each dialect answers (Ask
 * `interaction/requestPermission` / `requestUserInput`, Codex approval and question requests);
 * a pending plan is put to a joining client as its dialect puts plans (`requestPlanApproval`).
 * The question is withdrawn from the clients once the log says it was resolved.
 */
export class RemoteAsking {
  /** The questions open, by interaction id: withdrawn (aborted) once settled elsewhere. */
  private readonly open = new Map<string, { readonly controller: AbortController; readonly settled: Promise<void> }>();

  constructor(
    private readonly sessionId: string,
    private readonly reverse: ReverseRequester,
    private readonly answers: SharedAnswers,
    /** Whether this replica owns the session's host now (its own interactions ask locally). */
    private readonly owner: () => boolean,
    private readonly log?: Log,
  ) {}

  /** Every event of the session's log, in order. */
  onEvent(event: Event): void {
    switch (event.type) {
      case "approval.required":
        if (!this.owner()) void this.askPermission(event.payload as ApprovalDetails & { id: string });
        return;
      case "input.requested":
        if (!this.owner()) void this.askInput(event.payload as UserInputDetails & { id: string });
        return;
      case "approval.updated":
      case "input.resolved":
        this.withdraw((event.payload as { id: string }).id);
        return;
      case "plan.approved":
      case "plan.rejected":
        if (event.payload.id) this.withdraw(event.payload.id);
        return;
      default:
        return;
    }
  }

  /**
   * Asks about interactions already pending (approvals, questions and plans); resolves once every
   * one of those questions is settled: answered, withdrawn, or unanswerable.
   */
  askPending(pending: readonly InteractionRecord[], plans: readonly PendingPlan[] = []): Promise<void> {
    const asked = pending.map((interaction) => {
      if (interaction.kind === "approval") return this.askPermission({ id: interaction.id, ...interaction.payload });
      if (interaction.kind === "user_input") return this.askInput({ id: interaction.id, ...interaction.payload });
      return undefined;
    });
    return Promise.all([...asked, ...plans.map((plan) => this.askPlan(plan))]).then(() => undefined);
  }

  /** The session is closed here: no question stays open. */
  close(): void {
    for (const id of [...this.open.keys()]) this.withdraw(id);
  }

  /** Asks about one approval; resolves once the question is settled. */
  askPermission(details: ApprovalDetails & { id: string }): Promise<void> {
    const { sessionId } = this;
    const params = permissionRequest(sessionId, details.id, { toolName: details.toolName, input: details.args, allowedScopes: details.allowedScopes });
    // Each answer is counted as it comes, with who gave it (a vote under a `require` rule); one a requester did not count is given when it comes back.
    const counted = new WeakSet<object>();
    return this.ask(details.id, (signal) => {
      const vote = (answer: InteractionRequestPermissionResult, principal: SessionPrincipal | undefined) => {
        counted.add(answer);
        // A vote that cannot be given (the store is out of reach) settles nothing; it never turns into another answer.
        if (signal.aborted) return Promise.resolve(false);
        return this.answers.vote(details.id, decisionOf(answer), principal).catch((error: unknown) => {
          this.log?.("debug", "a client's vote on an approval was not taken", { sessionId, interactionId: details.id, error: errorText(error) });
          return false;
        });
      };
      return this.reverse.requestPermission(sessionId, params, signal, vote).then((answer) => {
        if (answer === undefined || signal.aborted || counted.has(answer)) return;
        return this.answers.vote(details.id, decisionOf(answer), undefined);
      });
    });
  }

  /** Asks one question (ask_user); resolves once it is settled. */
  askInput(details: UserInputDetails & { id: string }): Promise<void> {
    const { sessionId } = this;
    const params = { requestId: details.id, prompt: details.prompt, ...(details.options ? { options: details.options } : {}), sessionId, interactionId: details.id };
    return this.ask(details.id, (signal) =>
      this.reverse.requestUserInput(sessionId, params, signal).then((answer) => {
        if (answer === undefined || signal.aborted) return;
        return "declined" in answer ? this.answers.decline(details.id, answer.declined) : this.answers.respond(details.id, answer.response);
      }),
    );
  }

  /** Asks about one plan; resolves once it is settled. */
  askPlan({ id, plan }: PendingPlan): Promise<void> {
    const { sessionId } = this;
    return this.ask(id, (signal) =>
      this.reverse.requestPlanApproval(sessionId, { sessionId, interactionId: id, plan }, signal).then((answer) => {
        if (answer === undefined || signal.aborted) return;
        // This plan alone: another one proposed meanwhile has a question of its own.
        return this.answers.decidePlan(id, answer);
      }),
    );
  }

  /**
   * One question about interaction `id`, sent once the log has delivered the event (afterDelivery).
   * A question already open about it stays the one: asking again (a replayed and a live event
   * racing, or a joiner's listing and the event that opened it) would withdraw it and repeat it,
   * which a client sees as a cancel and a second prompt. An answer that lost to another (on any
   * replica), or a client that failed, changes nothing.
   */
  private ask(id: string, send: (signal: AbortSignal) => Promise<unknown>): Promise<void> {
    const already = this.open.get(id);
    if (already) return already.settled;
    const controller = new AbortController();
    const settled = afterDelivery(() => send(controller.signal))
      .catch((error: unknown) => this.log?.("debug", "a client's answer to an interaction was not taken", { sessionId: this.sessionId, interactionId: id, error: errorText(error) }))
      .finally(() => {
        if (this.open.get(id)?.controller === controller) this.open.delete(id);
      })
      .then(() => undefined);
    this.open.set(id, { controller, settled });
    return settled;
  }

  private withdraw(id: string): void {
    this.open.get(id)?.controller.abort();
    this.open.delete(id);
  }
}

/**
 * Asks once the log has handed the event to every listener: a requester may read state those
 * listeners keep (the Codex thread links the approval to its command item when it sees
 * `approval.required`), and this replica's RemoteAsking subscribed before any of them. A question
 * resolved meanwhile was withdrawn: its signal is aborted and the requester asks nobody.
 */
const afterDelivery = <T>(ask: () => Promise<T>): Promise<T> => Promise.resolve().then(ask);
