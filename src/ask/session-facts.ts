import type { Snapshot } from "../../generated/tau-v18.js";
import { sessionEphemeral, sessionTenant } from "../bridge/session-attributes.js";
import { SnapshotDigests, type SnapshotDigestOptions } from "../bridge/snapshot-digests.js";

/**
 * What `session/list` shows of a session the gateway has not opened: facts fixed when the session
 * was created (its tenant attribute, creation time and bootstrap model), read once per session.
 */

export interface SessionFacts {
  tenant: string | undefined;
  /** Epoch milliseconds. */
  createdAt: number;
  /** Model id as Ask hosts report it (no provider prefix). */
  model: string;
  /** A Codex ephemeral thread's session: listed to nobody. */
  ephemeral: boolean;
}

export type SessionFactsOptions = Omit<SnapshotDigestOptions<SessionFacts>, "digest" | "freshForMs">;

/** The facts fixed at a session's creation, read once per session (see snapshot-digests.ts). */
export class SessionFactsReader extends SnapshotDigests<SessionFacts> {
  constructor(options: SessionFactsOptions) {
    super({ ...options, digest: factsOf });
  }
}

/** The list facts of a snapshot (also used for sessions the gateway has open). */
export function factsOf(snapshot: Snapshot): SessionFacts {
  return { tenant: sessionTenant(snapshot), createdAt: snapshot.createdAt, model: modelName(snapshot), ephemeral: sessionEphemeral(snapshot) };
}

/** Ask hosts report the model without a provider prefix. */
export const modelName = (snapshot: Snapshot) => snapshot.bootstrap.model.id.replace(/^[^/]+\//, "");
