import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { CODEX_RELEASES } from "./support/codex-releases.js";
import { CodexTui, hasTmux } from "./support/codex-tui.js";
import { interopEachTest } from "./support/interop-test.js";

/**
 * The Codex terminal UI (the oldest and the newest release of the client window) approving calls
 * under `tau-gateway serve --approval-policy`: a call a `require` rule matches is offered once-only
 * choices — the UI draws the decisions the gateway makes available, and "don't ask again for this
 * command in this session" is not among them, since the decision holds for the call alone — and the
 * same tool called again with a changed argument is asked about again. A call no rule matches is
 * left to the session's mode, whose dialog keeps the session-wide choice; a call the policy denies is
 * refused with its rule, no dialog drawn. Skipped without tmux.
 */

const TOKEN = "tui-policy-interop-token-81b3";
const DIALOG = "Would you like to run the following command?";
const FOR_SESSION = "don't ask again for this command in this session";
// Single-digit arguments need an approval each; any other call is the session mode's to ask about.
const POLICY = `version: tui-1
rules:
  - name: no-sevens
    match: { tool: echo-args, arguments: { /a: "7" } }
    action: deny
    reason: seven is reserved
  - name: single-digits
    match: { tool: echo-args, arguments: { /a: "?" } }
    action: require
`;

const { newRun, serve, stops } = interopEachTest();

describe.skipIf(!hasTmux).each(CODEX_RELEASES)("the Codex terminal UI $version under an approval policy", (release) => {
  it("offers a required call's approval once only, asks again for the changed call, keeps the session-wide choice for a call no rule matches, and shows a denied call refused with its rule", async () => {
    const run = newRun();
    const policy = join(run.cwd, "..", "policy.yaml");
    writeFileSync(policy, POLICY);
    const gateway = await serve(["--approval-policy", policy], { ...run.env, TAU_GATEWAY_TOKEN: TOKEN });
    const tui = CodexTui.start({ cwd: run.cwd, home: join(run.cwd, "..", "home"), url: gateway.url, token: TOKEN, release });
    stops.push(() => tui.kill());
    await tui.shows("Ask Codex to do anything");

    /** Sends a prompt calling the tool with `a`; returns the approval dialog as drawn, after approving it with "y" and seeing the output. */
    const approvedCall = async (first: string, a: number) => {
      await tui.send([first, `/tool echo-args {"a":${a}}`]);
      const dialog = await tui.shows(DIALOG);
      await tui.answer(DIALOG, "y");
      await tui.shows(`You said: ${first}`);
      return dialog.slice(dialog.indexOf(DIALOG));
    };

    const first = await approvedCall("First call", 1);
    expect(first).toContain("Yes, proceed (y)");
    expect(first).not.toContain(FOR_SESSION);
    // The same tool, the argument changed: asked again (an approval never reaches beyond its call).
    const second = await approvedCall("Second call", 2);
    expect(second).toContain("Yes, proceed (y)");
    expect(second).not.toContain(FOR_SESSION);
    const unruled = await approvedCall("Third call", 10);
    expect(unruled).toContain(FOR_SESSION);
    expect(tui.screen()).toContain('Tool echo-args returned: {"a":10}');

    // A call the policy denies is refused with its rule, and no dialog is drawn for it.
    await tui.send(["Fourth call", '/tool echo-args {"a":7}']);
    const refused = await tui.until((screen) => screen.includes("You said: Fourth call") && screen.includes("seven is reserved"), "showed the refusal");
    expect(refused).toMatch(/Tool echo-args failed: denied by the approval policy, rule "no-sevens" \(\/rules\/0\):\s+seven is reserved/);
    expect(refused).not.toContain(DIALOG);
  });
});
