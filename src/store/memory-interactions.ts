import type {
  AnswerConsumer,
  AnswerDelivery,
  InteractionAnswer,
  InteractionCounters,
  InteractionKindName,
  InteractionStore,
  SharedInteraction,
} from "./interactions.js";

/**
 * Interactions of one gateway process (`--store memory`): nothing is shared, so the process is the
 * only one to open, answer and deliver them. Every method does its work before it returns (the
 * promise is already settled), and an accepted answer is delivered inside `resolve`, so the bridge
 * behaves exactly as when it kept its interactions to itself: a decision's events and its result
 * to Tau happen during the call that made it.
 */
export class MemoryInteractionStore implements InteractionStore {
  readonly kind = "memory";
  /** Pending interactions by session, then by id, in creation order. */
  private readonly sessions = new Map<string, Map<string, SharedInteraction>>();
  private readonly consumers = new Map<string, AnswerDelivery>();
  /** Answers accepted while no consumer was taking them, by host. */
  private readonly waiting = new Map<string, InteractionAnswer[]>();

  open(interaction: SharedInteraction): Promise<void> {
    const { sessionId, id } = interaction;
    let pending = this.sessions.get(sessionId);
    if (!pending) this.sessions.set(sessionId, (pending = new Map()));
    pending.set(id, interaction);
    return Promise.resolve();
  }

  pending(_hostKey: string, sessionId: string): Promise<SharedInteraction[]> {
    return Promise.resolve([...(this.sessions.get(sessionId)?.values() ?? [])]);
  }

  resolve(hostKey: string, sessionId: string, interactionId: string, kinds: readonly InteractionKindName[], decision: unknown): Promise<boolean> {
    const interaction = this.sessions.get(sessionId)?.get(interactionId);
    if (!interaction || !kinds.includes(interaction.kind)) return Promise.resolve(false);
    this.remove(sessionId, interactionId);
    this.queue(hostKey, { interaction, decision });
    return Promise.resolve(true);
  }

  vote(hostKey: string, sessionId: string, interactionId: string, kinds: readonly InteractionKindName[], decision: unknown): Promise<boolean> {
    const interaction = this.sessions.get(sessionId)?.get(interactionId);
    if (!interaction || !kinds.includes(interaction.kind)) return Promise.resolve(false);
    this.queue(hostKey, { interaction, decision, vote: true });
    return Promise.resolve(true);
  }

  withdraw(_hostKey: string, sessionId: string, interactionId: string): Promise<boolean> {
    return Promise.resolve(this.remove(sessionId, interactionId));
  }

  /** One process keeps a session's interactions in one place for the session's life: it never needs to pick up numbering. */
  counters(): Promise<InteractionCounters> {
    return Promise.resolve({});
  }

  consume(hostKey: string, deliver: AnswerDelivery): AnswerConsumer {
    this.consumers.set(hostKey, deliver);
    const waiting = this.waiting.get(hostKey) ?? [];
    this.waiting.delete(hostKey);
    for (const answer of waiting) void deliver(answer);
    return {
      stop: () => {
        if (this.consumers.get(hostKey) === deliver) this.consumers.delete(hostKey);
        return Promise.resolve();
      },
    };
  }

  private queue(hostKey: string, answer: InteractionAnswer): void {
    const deliver = this.consumers.get(hostKey);
    if (deliver) void deliver(answer);
    else this.waiting.set(hostKey, [...(this.waiting.get(hostKey) ?? []), answer]);
  }

  private remove(sessionId: string, interactionId: string): boolean {
    const pending = this.sessions.get(sessionId);
    if (!pending?.delete(interactionId)) return false;
    if (pending.size === 0) this.sessions.delete(sessionId);
    return true;
  }
}
