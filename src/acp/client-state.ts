import type { ClientCapabilities, Implementation } from "../../generated/acp-v1.js";
import type { AcpPeer } from "./peer.js";

/** What the gateway knows about one ACP connection: what it said in initialize. */
export class AcpClient {
  initialized = false;
  capabilities: ClientCapabilities = {};
  info: Implementation | undefined;
  /** A `--remote` relay's connection: its session updates carry their place in the log (relay-positions.ts). */
  relayed = false;

  constructor(readonly peer: AcpPeer) {}

  /** Form elicitation, the only kind the gateway uses (a mode counts only when present and not null). */
  get canElicit(): boolean {
    return this.capabilities.elicitation?.form != null;
  }

  get takesNotices(): boolean {
    return this.capabilities.session?.notices != null;
  }

  get takesCompaction(): boolean {
    return this.capabilities.session?.compaction != null;
  }
}
