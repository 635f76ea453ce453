import type { Snapshot } from "../../generated/tau-v18.js";
import { setById, type IdRecord } from "./delta-records.js";

/**
 * The id-keyed records of a snapshot that grow with the session — `turns` (one entry per turn the
 * session ever had) and `tools` (one per tool call) — updated in place instead of copied, for a
 * caller that asks for it (applyChanges' `share`), while the snapshot a patch starts from keeps
 * its value (see below for the one it need not).
 *
 * A patch must leave its input snapshot as it was, so a record a change writes to used to be
 * copied whole first: a `turn.set` cost O(turns), 10 µs at 50 turns and 425 µs at 1,000 (twice a
 * round). Here the newest snapshot of a lineage owns its record and the patch writes into it; the
 * input snapshot, now older, gets its record back as the newest one's minus what the patch wrote
 * (the values it overwrote, kept in `undo`), built only if something reads it (Baker's trick for
 * persistent arrays). Reading an old snapshot's record costs a copy, as every patch did before;
 * the hot path — each delta applied to the newest snapshot, the one before read at most for its
 * messages — copies nothing.
 *
 * What an old snapshot keeps alive is bounded: once a record has had as many updates as it has
 * entries since the last checkpoint, and some older snapshot still holds the chain of undos, the
 * chain is cut at a copy of the record as it is then (amortised, one entry copied per update).
 *
 * What this changes for a caller that shares: the record object of the newest snapshot is the
 * next snapshot's too, so a reference to `snapshot.turns` itself, kept past the next patch, sees
 * that patch; and a snapshot superseded by a patch that wrote neither record keeps sharing them
 * with its successor (passOn). The input of a patch that writes in place keeps its value for good.
 * The snapshot-mirror, the only caller that shares, reads a superseded snapshot only while it
 * reports the patch that superseded it.
 */

export type SharedKey = "turns" | "tools";
export const SHARED_KEYS: readonly SharedKey[] = ["turns", "tools"];

type AnyRecord = IdRecord<unknown>;

/** Marks, in an undo, an id the patch added (the older snapshot does not have it). */
const ABSENT = Symbol("absent");

/** An older snapshot's record, as the undo of what the next one changed. */
interface PastVersion {
  /** Each id the patch wrote → its value before (ABSENT when it added the id). */
  readonly undo: Map<string, unknown>;
  /** The next newer past version; null for the newest, whose `base` is what it is the undo of. */
  newer: PastVersion | null;
  /** The live record, or, after a checkpoint, a copy of it as it was then. */
  base: AnyRecord | null;
}

interface Lineage {
  /** The snapshot whose record this is: only a patch of it may write in place. */
  owner: Snapshot;
  /** The newest past version, held weakly: only older snapshots keep the chain alive. */
  newest: WeakRef<PastVersion> | undefined;
  entries: number;
  updatesSinceCheckpoint: number;
}

const lineages = new WeakMap<object, Lineage>();

/** Work done copying records (entries copied), for the bounded-work tests and the benchmark. */
export const recordCopies = { entries: 0 };

/** A copy of a record, counted in `recordCopies` (every keyed record a patch copies comes here). */
export function copyRecord(record: AnyRecord): { copy: AnyRecord; entries: number } {
  const copy = { ...record };
  const entries = Object.keys(copy).length;
  recordCopies.entries += entries;
  return { copy, entries };
}

/** One patch's writes to one shared record. */
export class RecordWrites {
  private readonly undo = new Map<string, unknown>();
  /** The record written to: the input's own (in place) or a copy made for the patch. */
  readonly record: AnyRecord;
  private readonly inPlace: boolean;
  /** Entries of `record` (counted, so the lineage knows its size without Object.keys). */
  private entries: number;

  constructor(
    private readonly input: Snapshot,
    private readonly key: SharedKey,
  ) {
    const current = input[key] as AnyRecord;
    const lineage = lineages.get(current);
    if (owns(lineage, input)) {
      checkpoint(lineage, current);
      this.inPlace = true;
      this.record = current;
      this.entries = lineage.entries;
    } else {
      this.inPlace = false;
      ({ copy: this.record, entries: this.entries } = copyRecord(current));
    }
  }

  set(id: string, value: unknown): void {
    const had = Object.hasOwn(this.record, id);
    if (!had) this.entries += 1;
    if (this.inPlace && !this.undo.has(id)) this.undo.set(id, had ? this.record[id] : ABSENT);
    setById(this.record, id, value);
  }

  /** The patch failed: the input's record as it was. */
  rollback(): void {
    if (!this.inPlace) return;
    for (const [id, before] of this.undo) {
      if (before === ABSENT) delete this.record[id];
      else setById(this.record, id, before);
    }
  }

  /** The patch succeeded: `next` owns the record, and the input gets its own value back as the undo of this patch. */
  commit(next: Snapshot): void {
    if (!this.inPlace) {
      lineages.set(this.record, { owner: next, newest: undefined, entries: this.entries, updatesSinceCheckpoint: 0 });
      return;
    }
    const lineage = lineages.get(this.record)!;
    lineage.entries = this.entries;
    handOver(this.input, next, this.key, this.record, lineage, this.undo);
  }
}

/**
 * A patch that did not write to `key` of `input`: when `input` owns the record, `next` (which
 * shares it) takes it over, so its next patch may write in place. `input` is not given an undo:
 * defining an accessor costs microseconds, and most patches (every streamed chunk) write neither
 * record, so `input` keeps sharing the record with `next` and would see a later patch's writes to
 * it. That is the one snapshot a sharing caller must let go of: the snapshot-mirror replaces its
 * installed snapshot with `next` and reads `input` only while it reports this patch.
 */
export function passOn(input: Snapshot, next: Snapshot, key: SharedKey): void {
  const lineage = lineages.get(input[key] as AnyRecord);
  if (owns(lineage, input)) lineage.owner = next;
}

/** Whether a patch of `input` may write its record in place (a sealed snapshot could not get its own value back). */
function owns(lineage: Lineage | undefined, input: Snapshot): lineage is Lineage {
  return lineage?.owner === input && !Object.isSealed(input);
}

function handOver(input: Snapshot, next: Snapshot, key: SharedKey, record: AnyRecord, lineage: Lineage, undo: Map<string, unknown>): void {
  const version: PastVersion = { undo, newer: null, base: record };
  const previous = lineage.newest?.deref();
  if (previous) {
    previous.newer = version;
    previous.base = null;
  }
  lineage.newest = new WeakRef(version);
  lineage.owner = next;
  lineage.updatesSinceCheckpoint += 1;
  retire(input, key, version);
}

/** Cuts the chain older snapshots hold at a copy of the record, once it is as long as the record (before a write). */
function checkpoint(lineage: Lineage, record: AnyRecord): void {
  if (lineage.updatesSinceCheckpoint < Math.max(64, lineage.entries)) return;
  lineage.updatesSinceCheckpoint = 0;
  const newest = lineage.newest?.deref();
  lineage.newest = undefined;
  if (newest) newest.base = copyRecord(record).copy;
}

/** `snapshot[key]` becomes the record `version` describes, built the first time it is read. */
function retire(snapshot: Snapshot, key: SharedKey, version: PastVersion): void {
  const settle = (value: unknown) => Object.defineProperty(snapshot, key, { value, writable: true, enumerable: true, configurable: true });
  Object.defineProperty(snapshot, key, {
    enumerable: true,
    configurable: true,
    get() {
      const value = materialize(version);
      settle(value);
      return value;
    },
    set: settle,
  });
}

function materialize(version: PastVersion): AnyRecord {
  const chain: PastVersion[] = [version];
  while (chain[chain.length - 1].newer) chain.push(chain[chain.length - 1].newer!);
  const { copy: record } = copyRecord(chain[chain.length - 1].base!);
  // Newest undo first: each takes the record one snapshot further back. Ids only ever get added
  // in place (a removal copies: shareable()), so deleting the added ones restores the key order too.
  for (let i = chain.length - 1; i >= 0; i--) {
    for (const [id, before] of chain[i].undo) {
      if (before === ABSENT) delete record[id];
      else setById(record, id, before);
    }
  }
  return record;
}
