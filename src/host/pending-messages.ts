import { randomUUID } from "node:crypto";
import type { PendingUserMessage, PendingUserMessagesState, UserTurnResult } from "../../generated/tau-v18.js";
import type { ProtocolError } from "./protocol-error.js";

/** A queue or steer request waiting for its turn; its response is sent when that turn settles. */
export interface PendingEntry {
  id: string;
  mode: "queue" | "steer";
  text: string;
  resolve(result: UserTurnResult): void;
  reject(error: ProtocolError): void;
}

/**
 * The pending-user-messages channel of one live session (spec §6.3): steering first, then queued
 * input, with its own revision starting at 1. Every change is published as a full replacement.
 */
export class PendingMessages {
  private revision = 1;
  private steers: PendingEntry[] = [];
  private queued: PendingEntry[] = [];

  constructor(private readonly publish: (state: PendingUserMessagesState) => void) {}

  state(): PendingUserMessagesState {
    const view = (e: PendingEntry): PendingUserMessage => ({ id: e.id, mode: e.mode, text: e.text });
    return { revision: this.revision, messages: [...this.steers.map(view), ...this.queued.map(view)] };
  }

  get size(): number {
    return this.steers.length + this.queued.length;
  }

  get hasSteers(): boolean {
    return this.steers.length > 0;
  }

  has(id: string): boolean {
    return this.steers.some((e) => e.id === id) || this.queued.some((e) => e.id === id);
  }

  /** Adds a request; steering gets a generated id, queued input keeps its history entry id. */
  add(entry: Omit<PendingEntry, "id"> & { id?: string }): void {
    const full: PendingEntry = { ...entry, id: entry.id ?? randomUUID() };
    (full.mode === "steer" ? this.steers : this.queued).push(full);
    this.changed();
  }

  /** Removes and returns every steering request (they run together as one continuation). */
  takeSteers(): PendingEntry[] {
    const taken = this.steers;
    if (!taken.length) return [];
    this.steers = [];
    this.changed();
    return taken;
  }

  takeNextQueued(): PendingEntry | undefined {
    const next = this.queued.shift();
    if (next) this.changed();
    return next;
  }

  /** Removes everything, steering first, then queued (cancelPendingMessages, context replacement). */
  takeAll(): PendingEntry[] {
    const taken = [...this.steers, ...this.queued];
    if (!taken.length) return [];
    this.steers = [];
    this.queued = [];
    this.changed();
    return taken;
  }

  private changed(): void {
    this.revision += 1;
    this.publish(this.state());
  }
}
