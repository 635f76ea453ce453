/**
 * A cost in US dollars as the client dialects carry it (Ask's `turn.completed.cost`, ACP's
 * `usage_update.cost.amount`): a decimal amount. Summing binary floats (a turn's messages, a
 * session's total) leaves noise in the last digits (0.000009999999999999999 for 0.00001); ten
 * decimal places keep a ten-thousandth of a cent per token's worth of precision and drop it.
 */
const DECIMALS = 1e10;

export function usdAmount(value: number): number {
  return Math.round(value * DECIMALS) / DECIMALS;
}
