import type { InteractionStore } from "../../store/interactions.js";

/** Where a session's interactions are shared with the other gateway replicas, and as whom. */
export interface InteractionShare {
  readonly store: InteractionStore;
  /** The Tau host the session lives on: its owner replica receives the calls and delivers the answers. */
  readonly hostKey: string;
  /** This replica's id (the one that opens an interaction holds its call). */
  readonly replicaId: string;
}
