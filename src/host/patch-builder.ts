import type { Change, Notice, Snapshot, TimelineItem } from "../../generated/tau-v18.js";

/**
 * Collects the changes of one patch, numbering the timeline items it appends from the snapshot's
 * high-water mark, so several items in one patch get consecutive sequences. Item ids are derived
 * from the sequence, which is never reused (rewind keeps the high-water mark, compaction continues
 * it), so they are unique for the life of the session.
 */
export class PatchBuilder {
  readonly changes: Change[] = [];
  private sequence: number;

  constructor(snapshot: Snapshot) {
    this.sequence = snapshot.timeline.sequence;
  }

  add(...changes: Change[]): this {
    this.changes.push(...changes);
    return this;
  }

  messageItem(messageId: string, createdAt = Date.now()): this {
    return this.item({ type: "message", messageId, ...this.nextItem(createdAt) });
  }

  toolItem(toolId: string, createdAt = Date.now()): this {
    return this.item({ type: "tool", toolId, ...this.nextItem(createdAt) });
  }

  operationItem(operationId: string, createdAt = Date.now()): this {
    return this.item({ type: "operation", operationId, ...this.nextItem(createdAt) });
  }

  noticeItem(notice: Notice, createdAt = Date.now()): this {
    return this.item({ type: "notice", notice, ...this.nextItem(createdAt) });
  }

  private nextItem(createdAt: number) {
    this.sequence += 1;
    return { id: timelineItemId(this.sequence), sequence: this.sequence, createdAt };
  }

  private item(item: TimelineItem): this {
    return this.add({ type: "timeline.append", item });
  }
}

export const timelineItemId = (sequence: number) => `item-${sequence}`;
