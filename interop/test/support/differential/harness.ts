import { runAcpCorpus } from "./acp-run.js";
import { ACP_SCENARIOS } from "./acp-scenarios.js";
import { acpReference, acpTau } from "./acp-targets.js";
import { runCodexCorpus, type ScenarioRun } from "./codex-run.js";
import { CODEX_SCENARIOS } from "./codex-scenarios.js";
import { codexTarget, installedCodexReleases, tauTarget, type CodexRelease } from "./codex-targets.js";
import { judge, loadExplanations, unused, type Explanation, type ReferenceReport } from "./report.js";
import { shape, wireDifferences } from "./wire-diff.js";

/**
 * The differential conformance harness: the Codex corpus on tau-gateway and on each installed
 * Codex release, the ACP corpus on `tau-gateway acp` and on codex-acp (over the pinned Codex),
 * each scenario's wires compared and every difference looked up in differences.json.
 */

export interface DifferentialResult {
  reports: ReferenceReport[];
  /** Entries of differences.json that explained nothing in the references that ran. */
  stale: Explanation[];
}

/** The differences of one scenario: the wires compared, and a scenario that could not be played to its end on one side. */
function scenarioDifferences(reference: ScenarioRun, actual: ScenarioRun): string[] {
  const lines = wireDifferences(shape(reference.entries), shape(actual.entries));
  if (reference.failure) lines.push(`the scenario did not finish on the reference: ${reference.failure}`);
  if (actual.failure) lines.push(`the scenario did not finish on tau-gateway: ${actual.failure}`);
  return lines;
}

function compare(reference: string, references: ScenarioRun[], actuals: ScenarioRun[], explanations: Explanation[], used: Set<Explanation>): ReferenceReport {
  return {
    reference,
    verdicts: references.map((run, i) => judge(reference, run.name, scenarioDifferences(run, actuals[i]!), explanations, used)),
  };
}

export async function runDifferential(options: { releases?: CodexRelease[]; acp?: boolean; log?: (line: string) => void } = {}): Promise<DifferentialResult> {
  const releases = options.releases ?? installedCodexReleases();
  const log = options.log ?? (() => undefined);
  const explanations = loadExplanations();
  const used = new Set<Explanation>();
  const reports: ReferenceReport[] = [];

  log(`codex corpus (${CODEX_SCENARIOS.length} scenarios) on tau-gateway`);
  const tau = await tauTarget();
  let tauRuns: ScenarioRun[];
  try {
    tauRuns = await runCodexCorpus(tau, CODEX_SCENARIOS);
  } finally {
    await tau.close();
  }
  for (const release of releases) {
    log(`codex corpus on codex ${release.version}`);
    const target = await codexTarget(release);
    try {
      reports.push(compare(target.name, await runCodexCorpus(target, CODEX_SCENARIOS), tauRuns, explanations, used));
    } finally {
      await target.close();
    }
  }

  if (options.acp !== false && releases.length) {
    log(`acp corpus (${ACP_SCENARIOS.length} scenarios) on tau-gateway acp and codex-acp`);
    const actual = await runAcpCorpus(await acpTau(), ACP_SCENARIOS);
    const reference = await runAcpCorpus(await acpReference(releases[0]!), ACP_SCENARIOS);
    reports.push(compare("codex-acp", reference, actual, explanations, used));
  }
  return { reports, stale: unused(explanations, used, reports.map((r) => r.reference)) };
}
