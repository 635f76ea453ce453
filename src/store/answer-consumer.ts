import type { Redis } from "ioredis";
import type { Log } from "../shared/log.js";
import type { AnswerConsumer, AnswerDelivery, InteractionAnswer } from "./interactions.js";
import type { InteractionScripts } from "./interaction-scripts.js";
import { STORE_COMMAND_TIMEOUT_MS } from "./store-health.js";

export interface AnswerConsumerOptions {
  /** The host's answer stream. */
  stream: string;
  group: string;
  /** This replica's name in the group. */
  consumer: string;
  /** An answer taken by a consumer and not acknowledged for this long is taken over (its consumer is presumed dead). */
  claimIdleMs: number;
  /** How long one blocking read waits before the loop looks for answers to take over again. */
  blockMs: number;
  /** Runs once per loop (the owner's housekeeping, e.g. sweeping interactions nobody holds any more). */
  everyRound?: () => Promise<void>;
  log?: Log;
}

type Entry = [id: string, fields: string[] | null];

/**
 * The owner's side of a host's answer stream: reads new answers with XREADGROUP, takes over the
 * ones another consumer took and never acknowledged (XAUTOCLAIM after `claimIdleMs`), delivers
 * each and acknowledges it (XACK, then XDEL) only once the delivery says Tau has the result. An
 * answer being delivered here is never taken over by this same consumer, so a long delivery (an
 * approved command running) cannot be sent twice.
 */
export class RedisAnswerConsumer implements AnswerConsumer {
  private readonly reader: Redis;
  private readonly inFlight = new Set<string>();
  private stopped = false;
  /** The group is known to exist (cleared when a read says it does not: a flushed store). */
  private grouped = false;
  private readonly loop: Promise<void>;
  /** Ends the pause between failed rounds (stop() does not wait for it). */
  private wake: (() => void) | undefined;

  constructor(
    private readonly client: Redis & InteractionScripts,
    private readonly deliver: AnswerDelivery,
    private readonly options: AnswerConsumerOptions,
  ) {
    // A blocking read holds its connection: it gets one of its own, whose command timeout starts
    // after the block. Under the store's own timeout a read that waited its full blockMs for
    // nothing (a healthy store with no answers) would fail as "Command timed out".
    this.reader = client.duplicate({ commandTimeout: options.blockMs + STORE_COMMAND_TIMEOUT_MS });
    this.loop = this.run();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.reader.disconnect();
    this.wake?.();
    await this.loop;
  }

  private async run(): Promise<void> {
    const { stream, log } = this.options;
    let failures = 0;
    while (!this.stopped) {
      try {
        await this.round();
        failures = 0;
      } catch (error) {
        if (this.stopped) return;
        if (String(error).includes("NOGROUP")) this.grouped = false;
        // Redis out of reach: answers wait in the stream; try again, backing off up to the claim period.
        failures++;
        log?.("warn", "interaction answers: reading the stream failed; retrying", { stream, attempt: failures, error: String(error) });
        await this.pause(Math.min(100 * 2 ** Math.min(failures, 10), this.options.claimIdleMs));
      }
    }
  }

  private pause(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(done, ms);
      function done() {
        clearTimeout(timer);
        resolve();
      }
      this.wake = done;
    });
  }

  /** Answers to take over, the owner's housekeeping, then new answers (waiting up to blockMs for them). */
  private async round(): Promise<void> {
    const { stream, group, consumer } = this.options;
    await this.ensureGroup();
    await this.takeOver();
    await this.options.everyRound?.();
    if (this.stopped) return;
    const read = (await this.reader.xreadgroup("GROUP", group, consumer, "COUNT", 100, "BLOCK", this.options.blockMs, "STREAMS", stream, ">")) as
      | Array<[string, Entry[]]>
      | null;
    for (const [, entries] of read ?? []) for (const entry of entries) this.take(entry);
  }

  /** Creates the consumer group from the stream's start, so answers accepted before any owner read are delivered too (once; again after the store lost it). */
  private async ensureGroup(): Promise<void> {
    if (this.grouped) return;
    try {
      await this.client.xgroup("CREATE", this.options.stream, this.options.group, "0", "MKSTREAM");
    } catch (error) {
      if (!String(error).includes("BUSYGROUP")) throw error;
    }
    this.grouped = true;
  }

  /** Answers whose consumer stopped acknowledging (a replica that died, or this one's failed deliveries). */
  private async takeOver(): Promise<void> {
    const { stream, group, consumer, claimIdleMs } = this.options;
    let cursor = "0-0";
    do {
      const [next, entries] = (await this.client.xautoclaim(stream, group, consumer, claimIdleMs, cursor, "COUNT", 100)) as [string, Entry[], string[]];
      for (const entry of entries) this.take(entry);
      cursor = next;
    } while (cursor !== "0-0" && !this.stopped);
  }

  private take([id, fields]: Entry): void {
    if (this.inFlight.has(id) || this.stopped) return;
    const answer = parseAnswer(fields);
    if (!answer) {
      this.options.log?.("warn", "interaction answers: an unreadable entry was dropped", { stream: this.options.stream, entryId: id });
      void this.settle(id);
      return;
    }
    this.inFlight.add(id);
    this.deliver(answer)
      .catch((error: unknown) => {
        this.options.log?.("warn", "interaction answers: delivery failed; it will be tried again", { entryId: id, error: String(error) });
        return false;
      })
      .then((delivered) => (delivered ? this.settle(id) : undefined))
      .finally(() => this.inFlight.delete(id));
  }

  private async settle(id: string): Promise<void> {
    try {
      await this.client.tauInteractionSettle(this.options.stream, this.options.group, id);
    } catch (error) {
      // Unacknowledged, it is delivered again later, and Tau refuses a second result for the call.
      this.options.log?.("warn", "interaction answers: acknowledging failed", { entryId: id, error: String(error) });
    }
  }
}

function parseAnswer(fields: string[] | null): InteractionAnswer | undefined {
  if (!fields) return undefined;
  const value = (name: string) => {
    const at = fields.indexOf(name);
    return at >= 0 && at % 2 === 0 ? fields[at + 1] : undefined;
  };
  try {
    const interaction = JSON.parse(value("interaction") ?? "null");
    const decision = JSON.parse(value("decision") ?? "null");
    if (typeof interaction !== "object" || interaction === null) return undefined;
    return { interaction, decision, ...(value("vote") === "1" ? { vote: true as const } : {}) };
  } catch {
    return undefined;
  }
}
