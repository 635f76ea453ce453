// Types of timeline.js for the TypeScript tests (the page loads the .js as it is).
export interface FrameCause {
  sessionId: string;
  seq?: number;
  type?: string;
  interactionId?: string;
}
export interface TimelineFrame {
  connection: string;
  dialect: string;
  index: number;
  direction: "client" | "server";
  kind: string;
  time: string;
  method?: string;
  message?: string;
  raw?: string;
  cause?: FrameCause;
  answers?: { index: number; latencyMs: number };
  verdict: { status: string };
}
export interface TimelineEvent {
  seq: number;
  type: string;
  payload?: unknown;
  preview?: string;
  tau?: { from: number; to: number };
}
export interface OperatorDecision {
  sessionId: string;
  interactionId: string;
  action: string;
  scope?: string;
  feedback?: string;
  response?: string;
  reason?: string;
  by: string;
  at: string;
  /** One vote of several that did not decide: approvals so far (unknown on a replica not holding the call) of those needed. */
  vote?: { approvals?: number; needed: number };
}
export interface Answer<F> {
  by: string;
  dialect: string;
  time: string;
  words: string;
  frame?: F;
}
export interface InteractionView<F> {
  id: string;
  kind: string;
  seq?: number;
  payload: any;
  pending: boolean;
  asked: F[];
  withdrawn: F[];
  answers: Answer<F>[];
  outcome?: { seq: number; id: string; status: string; [key: string]: unknown };
}
export function frameEventKey(frame: TimelineFrame): FrameCause | undefined;
export function tauDeltaOf(frame: TimelineFrame): { sessionId: string; revision: number } | undefined;
export function sessionIdsOf(frames: TimelineFrame[]): string[];
export function buildTimeline<F extends TimelineFrame>(sessionId: string, events: TimelineEvent[], frames: F[]): (TimelineEvent & { frames: F[] })[];
export function answerWords(frame: TimelineFrame): string;
export function decisionWords(decision: OperatorDecision): string;
export function interactionsOf<F extends TimelineFrame>(
  sessionId: string,
  events: TimelineEvent[],
  pending: { id: string; kind: string; payload?: unknown }[],
  frames: F[],
  decisions: OperatorDecision[],
): InteractionView<F>[];
