import type { Sender } from "../../registry/model.js";
import type { FrameKind } from "./frame-facts.js";

/**
 * Requests paired with their answers, for the latency the inspector shows and the calls it counts
 * as waiting: a request opens a call of its sender; a response or error closes the other side's
 * call with the same id. A repeated open id keeps the first call (the validator flags the repeat).
 */

export interface OpenCall {
  /** The request's position in its connection or transcript. */
  index: number;
  /** When it was sent (ms since the epoch), when known. */
  at?: number;
}

export interface PairedFrame {
  kind: FrameKind;
  id?: string | number;
  direction?: Sender;
  index: number;
}

export class CallPairing {
  private readonly open = { client: new Map<string | number, OpenCall>(), server: new Map<string | number, OpenCall>() };

  /** Follows one frame; for an answer to an open call, the request it answers and (both times known) how long that took. */
  pair(frame: PairedFrame, at: number | undefined): { index: number; latencyMs?: number } | undefined {
    if (frame.id === undefined || frame.direction === undefined) return undefined;
    if (frame.kind === "request") {
      const calls = this.open[frame.direction];
      if (!calls.has(frame.id)) calls.set(frame.id, { index: frame.index, at });
      return undefined;
    }
    if (frame.kind !== "response" && frame.kind !== "error") return undefined;
    const calls = this.open[frame.direction === "client" ? "server" : "client"];
    const call = calls.get(frame.id);
    if (!call) return undefined;
    calls.delete(frame.id);
    return call.at === undefined || at === undefined ? { index: call.index } : { index: call.index, latencyMs: at - call.at };
  }

  /** The calls still waiting for an answer, either way. */
  waiting(): OpenCall[] {
    return [...this.open.client.values(), ...this.open.server.values()];
  }
}
