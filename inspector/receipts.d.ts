// Types of receipts.js for the TypeScript tests (the page loads the .js as it is).
import type { Receipt, ReceiptStep } from "../src/bridge/interactions/policy/receipts.js";
export function receiptHead(receipt: Receipt): string;
export function stepWords(step: ReceiptStep): string;
export function finished(receipt: Receipt): boolean;
