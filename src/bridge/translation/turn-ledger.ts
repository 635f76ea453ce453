import type { MessageRecord, Snapshot } from "../../../generated/tau-v18.js";
import { messageText, messageUsage } from "../message-content.js";
import { usdAmount } from "../../shared/money.js";

/**
 * What `turn.completed` reports (DESIGN §4.3): the assistant text of the turn and the tokens and
 * cost of the assistant messages committed during it. Tau's turn records carry only the outcome,
 * so the ledger collects committed assistant messages while a turn is open, and falls back to the
 * snapshot (messages after the turn's user message) for turns it did not watch, e.g. ones that
 * ran while the upstream connection was down.
 */

export interface TurnTotals {
  response: string;
  inputTokens: number;
  outputTokens: number;
  cost: number;
}

export class TurnLedger {
  /** Open turns in start order → their committed assistant messages by id, in commit order. */
  private readonly open = new Map<string, Map<string, MessageRecord>>();

  /** A turn began; anything it committed before we watched it is taken from `snapshot`. */
  start(turnId: string, snapshot?: Snapshot): void {
    if (this.open.has(turnId)) return;
    const messages = new Map<string, MessageRecord>();
    for (const record of snapshot ? committedDuringTurn(snapshot, turnId) : []) messages.set(record.id, record);
    this.open.set(turnId, messages);
  }

  /** A committed assistant message belongs to the most recently started open turn. */
  record(record: MessageRecord): void {
    if (record.state !== "committed" || record.message.role !== "assistant") return;
    const turns = [...this.open.values()];
    turns[turns.length - 1]?.set(record.id, record);
  }

  /** Closes the turn and sums it up; messages found only in `snapshot` are added after the watched ones. */
  finish(turnId: string, snapshot: Snapshot): TurnTotals {
    const messages = this.open.get(turnId) ?? new Map<string, MessageRecord>();
    this.open.delete(turnId);
    for (const record of committedDuringTurn(snapshot, turnId)) messages.set(record.id, record);
    return totals([...messages.values()]);
  }
}

/** What `turn.completed` reports of a turn read from the snapshot alone (one the gateway did not watch). */
export function turnTotals(snapshot: Snapshot, turnId: string): TurnTotals {
  return totals(committedDuringTurn(snapshot, turnId));
}

/**
 * Committed assistant messages after the turn's user message (whose id is the user history entry
 * id) up to the user message of the next turn. Empty when the user message is not in the snapshot
 * (e.g. compacted away).
 */
export function committedDuringTurn(snapshot: Snapshot, turnId: string): MessageRecord[] {
  const { messages } = snapshot;
  // From the end: the turn asked about is nearly always the newest, so this costs the turn's length, not the session's.
  let start = messages.length - 1;
  while (start >= 0 && messages[start].id !== turnId) start--;
  if (start < 0) return [];
  const found: MessageRecord[] = [];
  for (let i = start + 1; i < messages.length; i++) {
    const record = messages[i];
    if (record.message.role === "user" && record.id !== turnId && record.id in snapshot.turns) break;
    if (record.state === "committed" && record.message.role === "assistant") found.push(record);
  }
  return found;
}

function totals(messages: MessageRecord[]): TurnTotals {
  let inputTokens = 0;
  let outputTokens = 0;
  let cost = 0;
  let response = "";
  for (const record of messages) {
    const usage = messageUsage(record);
    if (usage) {
      inputTokens += usage.input;
      outputTokens += usage.output;
      cost += usage.cost;
    }
    // The final answer is the last assistant text; a trailing message with only tool calls does not erase it.
    const text = messageText(record.message);
    if (text.length > 0) response = text;
  }
  return { response, inputTokens, outputTokens, cost: usdAmount(cost) };
}
