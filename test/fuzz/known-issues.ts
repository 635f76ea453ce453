/**
 * Defects the fuzz suite finds that are being fixed elsewhere. The generators that trigger them
 * stay; the properties that would fail are held back (skipped in CI, run with FUZZ_KNOWN_ISSUES=1)
 * until the fix lands — then delete the entry and the property runs with the rest.
 */

export interface KnownIssue {
  /** Names the defect, for the skip note. */
  title: string;
}

export const KNOWN_ISSUES = {
  superlinearExecPattern: { title: "superlinear regex on session.exec command/cwd (a long command or cwd stalls every connection)" },
  stdioIgnoresSigterm: { title: "tau-gateway stdio ignores SIGTERM while stdin is open" },
  stdioFlood: { title: "tau-gateway stdio loses requests and grows without bound under a flood" },
  tauDuplicateInflightIds: { title: "duplicate in-flight ids on /tau break both responses" },
  snapshotAmplification: { title: "session.snapshot amplification (the bridge re-fetches snapshots in a loop)" },
  invalidUtf8LogAmplification: { title: "invalid-UTF-8 log amplification (a warn line with a stack trace per bad frame)" },
  httpCharset: { title: "POST /rpc decodes a non-UTF-8 charset as UTF-8 instead of answering 415" },
} satisfies Record<string, KnownIssue>;
