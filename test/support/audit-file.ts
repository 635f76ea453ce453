import { readFileSync } from "node:fs";
import { join } from "node:path";

/** What the audit file is read through: the gateway's audit log, to wait for what it has queued. */
export interface AuditedGateway {
  readonly stack: { readonly audit?: { flushed(): Promise<void> } };
}

/** The receipts of one session in `--audit DIR`'s audit.jsonl, once everything queued is written. */
export async function auditedReceipts(gw: AuditedGateway, auditDir: string, sessionId: string): Promise<any[]> {
  await gw.stack.audit!.flushed();
  return readFileSync(join(auditDir, "audit.jsonl"), "utf8")
    .split("\n")
    .filter(Boolean)
    .map((line) => JSON.parse(line))
    .filter((receipt) => receipt.sessionId === sessionId);
}
