/**
 * Pending interactions (approvals, user-input questions, plans) as every gateway replica sees
 * them. The replica that owns a Tau host opens them (it alone receives the host's client-tool
 * calls); any replica may list them and answer one. The first answer wins, atomically; it goes to
 * the host's owner as an InteractionAnswer, which is acknowledged only once Tau has taken the
 * call's result, so every accepted answer reaches Tau exactly once, even across a change of owner.
 */

export type InteractionKindName = "approval" | "user_input" | "plan";

/** The Tau call an interaction is about (the `session.clientTool.call` message, as JSON). */
export interface SharedToolCall {
  readonly sessionId: string;
  readonly callId: string;
  readonly toolName: string;
  readonly [field: string]: unknown;
}

/** A pending interaction, as stored for every replica. Everything in it is plain JSON. */
export interface SharedInteraction {
  readonly id: string;
  readonly sessionId: string;
  readonly kind: InteractionKindName;
  /** The Tau host whose call it is (the answer goes to that host's owner). */
  readonly hostKey: string;
  /** The replica that opened it, which holds the call. */
  readonly openedBy: string;
  readonly call: SharedToolCall;
  /** What the tool keeps about it (the question, the plan, the approval's details). */
  readonly data: unknown;
  /** Its interaction/list record, when its kind is listed. */
  readonly record?: unknown;
  /** When it stops waiting (ms since the epoch): past it, nobody can answer it any more. */
  readonly deadlineAt: number;
}

/** An accepted answer on its way to the replica that talks to Tau for the call. */
export interface InteractionAnswer {
  /** The interaction as it was when the answer won. */
  readonly interaction: SharedInteraction;
  /** What was decided (the bridge's words, plain JSON). */
  readonly decision: unknown;
  /** A vote (`vote`): the interaction stayed pending, for the replica holding its call to count this answer. */
  readonly vote?: true;
}

/**
 * Delivers one answer: resolves with true once Tau has answered the call's result (accepted or not:
 * `accepted: false` means the call is over, and a result is never sent twice), false when it could
 * not be sent and must be tried again later.
 */
export type AnswerDelivery = (answer: InteractionAnswer) => Promise<boolean>;

export interface AnswerConsumer {
  /** Stops taking answers; answers taken and not yet delivered stay unacknowledged, for the next owner. */
  stop(): Promise<void>;
}

/** The last interaction number handed out per kind in a session (ids are never reused). */
export type InteractionCounters = Partial<Record<InteractionKindName, number>>;

export interface InteractionStore {
  readonly kind: "memory" | "redis";
  /** Publishes a new pending interaction for every replica (`number` is its id's counter); refused when its id is taken. */
  open(interaction: SharedInteraction, number: number): Promise<void>;
  /** A session's pending interactions, oldest first. */
  pending(hostKey: string, sessionId: string): Promise<SharedInteraction[]>;
  /**
   * Answers `interactionId` if it is still pending and of one of `kinds`: true when this answer
   * won (it is then on its way to the host's owner), false when it was not pending (never was,
   * already answered, expired or cancelled).
   */
  resolve(hostKey: string, sessionId: string, interactionId: string, kinds: readonly InteractionKindName[], decision: unknown): Promise<boolean>;
  /**
   * One vote on `interactionId` (an approval a policy rule needs several approvers for): queued on
   * the host's answer stream for the owner to count, while the interaction stays pending, so every
   * other client on any replica can still answer it until the owner's count decides. True when it
   * was pending (and of one of `kinds`).
   */
  vote(hostKey: string, sessionId: string, interactionId: string, kinds: readonly InteractionKindName[], decision: unknown): Promise<boolean>;
  /** Ends a pending interaction without an answer (deadline, Tau cancelled the call): true when it was still pending. */
  withdraw(hostKey: string, sessionId: string, interactionId: string): Promise<boolean>;
  /** The highest interaction numbers a session has used, so a new owner never reuses an id. */
  counters(hostKey: string, sessionId: string): Promise<InteractionCounters>;
  /** Starts delivering the accepted answers of `hostKey` (only its owner does). */
  consume(hostKey: string, deliver: AnswerDelivery): AnswerConsumer;
}
