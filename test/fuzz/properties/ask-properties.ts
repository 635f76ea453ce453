import type { RunProperty } from "../target.js";

/**
 * The bridge fetches a session's snapshot when a delta does not apply; that must stay rare. Over a
 * whole fuzz run, the upstream may see at most one `session.snapshot` per this many client
 * messages (plus a few per session for the first sight and resyncs).
 */
const CLIENT_MESSAGES_PER_SNAPSHOT = 10;
const SNAPSHOTS_PER_SESSION = 4;

export const snapshotAmplification: RunProperty = {
  checks: `the bridge sends at most one session.snapshot per ${CLIENT_MESSAGES_PER_SNAPSHOT} client messages (plus ${SNAPSHOTS_PER_SESSION} per session)`,
  async run(target, { upstream }) {
    const snapshots = upstream.recorder.requests("session.snapshot");
    const sessions = upstream.recorder.requests("session.create");
    const bound = Math.ceil(target.stats.requests / CLIENT_MESSAGES_PER_SNAPSHOT) + SNAPSHOTS_PER_SESSION * sessions;
    return snapshots > bound ? [`${snapshots} session.snapshot requests upstream for ${target.stats.requests} client messages and ${sessions} sessions (at most ${bound} expected)`] : [];
  },
};
