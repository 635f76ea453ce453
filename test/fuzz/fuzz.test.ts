import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { FuzzSession } from "./engine.js";
import { casesPerTarget, fuzzSettings } from "./settings.js";
import { summaryTable } from "./summary.js";
import { loadTargets } from "./targets.js";

/**
 * The bounded fuzz run of `npm test`: every dialect on every transport (targets/), a few seconds
 * each (settings.ts), a fixed seed and a random one, each target in a gateway process of its own
 * behind a recording upstream, then the target's run properties. `npm run fuzz` runs the same
 * targets for much longer (see main.ts).
 */

const settings = fuzzSettings("ci");
const targets = await loadTargets(settings.targets);

for (const target of targets) {
  const cases = casesPerTarget(settings, targets, target);
  describe(`fuzzing ${target.name}`, () => {
    let session: FuzzSession | undefined;
    beforeAll(async () => {
      session = await FuzzSession.open(target, settings);
    }, 120_000);
    afterAll(async () => {
      await session?.close();
    }, 60_000);

    it(`every request answered exactly once and validly, nothing invalid upstream, process up, memory back near baseline, a normal session afterwards, the run properties (${cases} cases, seeds ${settings.fixedSeed} and ${settings.randomSeed})`, async () => {
      const report = await session!.fuzz(cases);
      console.log(`${summaryTable([report])}\n(random seed ${settings.randomSeed}; replay with FUZZ_SEED=${settings.randomSeed})`);
      expect(report.failures, report.failures.join("\n\n")).toEqual([]);
    }, 600_000);
  });
}
