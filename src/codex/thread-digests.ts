import type { Thread } from "../../generated/codex-v2.js";
import type { Snapshot } from "../../generated/tau-v18.js";
import { sessionTenant } from "../bridge/session-attributes.js";
import { lastActivityMs } from "../bridge/session-activity.js";
import { childThreadsOf } from "./child-threads.js";
import { threadObject } from "./thread-object.js";

/** What `thread/list` shows of a thread no client has loaded: its tenant, its summary and when it was last updated. */
export interface ThreadDigest {
  tenant: string | undefined;
  thread: Thread;
  /** Epoch milliseconds. */
  createdAtMs: number;
  /** Epoch milliseconds of the last message. */
  updatedAtMs: number;
  /** The child threads of the session's sub-agents. */
  children: Thread[];
}

export function threadDigestOf(snapshot: Snapshot, serverVersion: string): ThreadDigest {
  return { tenant: sessionTenant(snapshot), thread: threadObject(snapshot, serverVersion, { type: "notLoaded" }, []), createdAtMs: snapshot.createdAt, updatedAtMs: lastActivityMs(snapshot), children: childThreadsOf(snapshot, serverVersion) };
}
