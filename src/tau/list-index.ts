/**
 * Where each id of a snapshot's message list or timeline sits, for a caller that applies every patch
 * to the newest snapshot (applyChanges' `share`): finding a message, or making sure an appended
 * message or timeline item is new, was a walk of the whole list, twice a turn for each list, and a
 * session keeps every message and item it ever had (at 220 turns the walks were 40% of applying a
 * turn's deltas on the gateway; the lists' entries are of many shapes, so each step is a slow
 * property load).
 *
 * An index belongs to one list object, and is exact for it: a snapshot's lists are never changed
 * once its patch is done (a patch copies a list before writing to it), so an index made for a list
 * stays true of it. A patch that writes to a list takes the input list's index along to its copy
 * (the input's own lookups walk again, as before), adding what it appends; a patch that fails
 * takes its additions back out, leaving the input's index as it was. A removal (`timeline.remove`)
 * moves positions, so its patch walks and its result gets no index; the next patch builds one.
 */

interface Listed {
  readonly id: string;
}

const indexes = new WeakMap<readonly Listed[], Map<string, number>>();

/** Entries walked to build indexes, for the bounded-work tests (a list is walked once, not per patch). */
export const listIndexBuilds = { entries: 0 };

/** One patch's lookups in one list, and its writes to it. */
export class ListIndex {
  /** Id → position in the draft's list; the input's index until the patch commits. */
  private positions: Map<string, number> | undefined;
  /** Ids this patch appended (taken out again if it fails). */
  private readonly added: string[] = [];
  /** A removal moved positions: the rest of the patch walks. */
  private broken = false;

  constructor(private readonly input: readonly Listed[]) {}

  /** The position of `id` in `list` (the input, or the patch's copy of it), or -1; the last one if listed twice, as a walk from the end finds. */
  indexOf(list: readonly Listed[], id: string): number {
    if (this.broken) return lastIndexOf(list, id);
    const at = this.load().get(id);
    return at !== undefined && list[at]?.id === id ? at : -1;
  }

  /** `list`'s last entry was just appended. */
  appended(list: readonly Listed[]): void {
    if (this.broken) return;
    const id = list[list.length - 1]!.id;
    const positions = this.load();
    if (!positions.has(id)) this.added.push(id);
    positions.set(id, list.length - 1);
  }

  /** An entry was removed from the list: positions after it moved. */
  removed(): void {
    this.broken = true;
  }

  /** The patch failed: the input's index as it was. */
  rollback(): void {
    for (const id of this.added) this.positions!.delete(id);
  }

  /** The patch succeeded and `output` is the result's list: the index goes with it (or, after a removal, nowhere). */
  commit(output: readonly Listed[]): void {
    if (!this.positions || output === this.input) return;
    indexes.delete(this.input);
    if (!this.broken) indexes.set(output, this.positions);
  }

  private load(): Map<string, number> {
    if (this.positions) return this.positions;
    let positions = indexes.get(this.input);
    if (!positions) {
      positions = new Map();
      this.input.forEach((entry, at) => positions!.set(entry.id, at));
      listIndexBuilds.entries += this.input.length;
      indexes.set(this.input, positions);
    }
    return (this.positions = positions);
  }
}

/** Searches from the end: streamed and replaced entries are nearly always the newest. */
export function lastIndexOf(list: readonly Listed[], id: string): number {
  for (let i = list.length - 1; i >= 0; i--) if (list[i].id === id) return i;
  return -1;
}
