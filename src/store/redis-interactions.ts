import type { Redis } from "ioredis";
import type { Log } from "../shared/log.js";
import { RedisAnswerConsumer } from "./answer-consumer.js";
import { deadlineMember, InteractionKeys } from "./interaction-keys.js";
import { withInteractionScripts, type InteractionScripts } from "./interaction-scripts.js";
import type {
  AnswerConsumer,
  AnswerDelivery,
  InteractionCounters,
  InteractionKindName,
  InteractionStore,
  SharedInteraction,
} from "./interactions.js";

export interface RedisInteractionStoreOptions {
  /** Prefix of every key (default `tau-gateway:`). */
  prefix?: string;
  /** This replica's name in the answer streams' consumer group. */
  replicaId: string;
  /** An answer a consumer took and has not acknowledged for this long is taken over by the owner (default 30 000 ms). */
  claimIdleMs?: number;
  /** How long the owner's blocking read waits between rounds (default 2 000 ms). */
  blockMs?: number;
  /**
   * How long past its deadline an interaction nobody withdrew (its replica died with it) stays
   * listed before the owner removes it (default 10 000 ms: the replica that opened it answers its
   * own deadline first when it is alive).
   */
  sweepGraceMs?: number;
  log?: Log;
}

const ANSWER_GROUP = "owners";
const KINDS: readonly InteractionKindName[] = ["approval", "user_input", "plan"];

/**
 * Interactions shared by every replica through Redis: pending interactions in a hash per session
 * (listed in creation order), answers decided by a Lua script (first answer wins) and queued on the
 * host's answer stream, where the host's owner reads them with a consumer group.
 */
export class RedisInteractionStore implements InteractionStore {
  readonly kind = "redis";
  private readonly client: Redis & InteractionScripts;
  private readonly prefix: string;

  constructor(
    client: Redis,
    private readonly options: RedisInteractionStoreOptions,
  ) {
    this.client = withInteractionScripts(client);
    this.prefix = options.prefix ?? "tau-gateway:";
  }

  async open(interaction: SharedInteraction, number: number): Promise<void> {
    const { id, sessionId, kind, deadlineAt } = interaction;
    const keys = this.keys(interaction.hostKey);
    const ordinal = await this.client.tauInteractionOpen(
      keys.pending(sessionId),
      keys.order(sessionId),
      keys.numbers(sessionId),
      keys.ordinal,
      keys.deadlines,
      id,
      JSON.stringify(interaction),
      kind,
      number,
      deadlineAt,
      deadlineMember(sessionId, id),
    );
    if (ordinal === 0) throw new Error(`interaction ${id} of session ${sessionId} exists already: ids are never reused`);
  }

  async pending(hostKey: string, sessionId: string): Promise<SharedInteraction[]> {
    const keys = this.keys(hostKey);
    const ids = await this.client.zrange(keys.order(sessionId), "0", "-1");
    if (ids.length === 0) return [];
    const values = await this.client.hmget(keys.pending(sessionId), ...ids);
    // One answered between the two reads is simply no longer listed.
    return values.flatMap((raw) => (raw === null ? [] : [JSON.parse(raw) as SharedInteraction]));
  }

  async resolve(hostKey: string, sessionId: string, interactionId: string, kinds: readonly InteractionKindName[], decision: unknown): Promise<boolean> {
    const keys = this.keys(hostKey);
    const entryId = await this.client.tauInteractionResolve(
      keys.pending(sessionId),
      keys.order(sessionId),
      keys.deadlines,
      keys.answers,
      interactionId,
      kinds.join(","),
      JSON.stringify(decision ?? null),
      deadlineMember(sessionId, interactionId),
    );
    return entryId !== null;
  }

  async vote(hostKey: string, sessionId: string, interactionId: string, kinds: readonly InteractionKindName[], decision: unknown): Promise<boolean> {
    const keys = this.keys(hostKey);
    return (await this.client.tauInteractionVote(keys.pending(sessionId), keys.answers, interactionId, kinds.join(","), JSON.stringify(decision ?? null))) !== null;
  }

  async withdraw(hostKey: string, sessionId: string, interactionId: string): Promise<boolean> {
    const keys = this.keys(hostKey);
    return (await this.client.tauInteractionWithdraw(keys.pending(sessionId), keys.order(sessionId), keys.deadlines, interactionId, deadlineMember(sessionId, interactionId))) === 1;
  }

  async counters(hostKey: string, sessionId: string): Promise<InteractionCounters> {
    const numbers = await this.client.hgetall(this.keys(hostKey).numbers(sessionId));
    const counters: InteractionCounters = {};
    for (const kind of KINDS) if (numbers[kind] !== undefined) counters[kind] = Number(numbers[kind]);
    return counters;
  }

  consume(hostKey: string, deliver: AnswerDelivery): AnswerConsumer {
    const keys = this.keys(hostKey);
    return new RedisAnswerConsumer(this.client, deliver, {
      stream: keys.answers,
      group: ANSWER_GROUP,
      consumer: this.options.replicaId,
      claimIdleMs: this.options.claimIdleMs ?? 30_000,
      blockMs: this.options.blockMs ?? 2_000,
      everyRound: () => this.sweep(hostKey),
      log: this.options.log,
    });
  }

  /** Removes the host's interactions long past their deadline: the replica that opened them is gone (Tau has cancelled their calls). */
  async sweep(hostKey: string): Promise<void> {
    const keys = this.keys(hostKey);
    const overdue = await this.client.zrangebyscore(keys.deadlines, "-inf", Date.now() - (this.options.sweepGraceMs ?? 10_000), "LIMIT", 0, 100);
    for (const member of overdue) {
      const at = member.indexOf(" ");
      const sessionId = member.slice(0, at);
      const interactionId = member.slice(at + 1);
      await this.client.tauInteractionWithdraw(keys.pending(sessionId), keys.order(sessionId), keys.deadlines, interactionId, member);
    }
  }

  private keys(hostKey: string): InteractionKeys {
    return new InteractionKeys(this.prefix, hostKey);
  }
}
