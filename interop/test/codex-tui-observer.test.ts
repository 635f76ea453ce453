import { mkdirSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { AskTestClient } from "../../test/support/ask-client.js";
import { payloadsOf, waitForTerminal } from "../../test/support/ask-events.js";
import { writeTokensFile } from "../../test/support/tokens-file.js";
import { CODEX_RELEASES } from "./support/codex-releases.js";
import { CodexTui, hasTmux } from "./support/codex-tui.js";
import { interopEachTest } from "./support/interop-test.js";
import { officialProblems, recordedTranscript } from "./support/gateway-process.js";

/**
 * The Codex terminal UI (the oldest and the newest release of the client window) as an observer of
 * a shared session: `tau-gateway serve` with a tokens file in which bob's default role is observer;
 * alice, on a phone (an Ask client on `/rpc`), owns the session and works it. The UI resumes
 * alice's thread with bob's token and shows her turns. Its own prompt and its interrupt (Esc) are
 * refused with Codex's error carrying the gateway's words (the UI itself says only that turn/start
 * failed; the recording holds the words). When alice's turn runs a command tool the UI shows the
 * command running but is asked nothing — no requestApproval reaches it, so no dialog appears whose
 * answer would decide nothing; alice approves from the phone and the UI shows the output. Skipped
 * without tmux.
 */

const ALICE = "observer-interop-alice-7c1e";
const BOB = "observer-interop-bob-2f9a";
const DIALOG = "Would you like to run the following command?";

const { newRun, serve, stops } = interopEachTest();

describe.skipIf(!hasTmux).each(CODEX_RELEASES)("the Codex terminal UI $version as an observer of a shared session", (release) => {
  it("shows the owner's turns and the command waiting for approval, offers no approval, and is refused its prompt and interrupt", async () => {
    const run = newRun();
    const tokensFile = writeTokensFile(join(run.cwd, ".."), [
      { id: "alice", token: ALICE, tenant: "team" },
      { id: "bob", token: BOB, tenant: "team", sessionRole: "observer" },
    ]);
    const recordings = join(run.cwd, "..", "recordings");
    mkdirSync(recordings);
    const gateway = await serve(["--record", recordings], { ...run.env, TAU_GATEWAY_TOKENS_FILE: tokensFile });
    // What the terminal UI's connections (the only Codex ones) said and were told, as the gateway recorded them.
    const codexLines = () =>
      readdirSync(recordings)
        .filter((file) => file.startsWith("codex-"))
        .sort()
        .flatMap((file) => readFileSync(join(recordings, file), "utf8").split("\n").filter(Boolean).map((line) => JSON.parse(line)))
        .filter((line) => "direction" in line) as ReturnType<typeof recordedTranscript>;
    /** The gateway's forbidden (-32011) refusals of the UI's requests, in their words. */
    const refusals = () => codexLines().flatMap(({ direction, message }) => (direction === "server" && message.error?.code === -32011 ? [message.error.message as string] : []));

    const phone = await AskTestClient.websocket(`${gateway.url}/rpc`, { headers: { authorization: `Bearer ${ALICE}` } });
    phone.socket.on("error", () => undefined);
    stops.push(() => phone.socket.terminate());
    await phone.request("initialize", { client: { name: "phone", version: "1" } });
    const { session } = await phone.request("session/create", {});
    const sessionId = session.sessionId as string;
    await phone.request("session/subscribe", { sessionId });
    const first = await phone.request("session/send", { sessionId, content: "Hello from the phone" });
    await waitForTerminal(phone, sessionId, first.turnId);

    const tui = CodexTui.start({ cwd: run.cwd, home: join(run.cwd, "..", "home"), url: gateway.url, token: BOB, release, args: ["resume", sessionId] });
    stops.push(() => tui.kill());
    await tui.shows("You said: Hello from the phone");

    // Its own prompt is refused in Codex's error, with the gateway's words (the UI says only that turn/start failed), and reaches nobody.
    await tui.send(["Let me drive"]);
    await tui.shows("turn/start failed");
    expect(refusals()).toContain("turn/start: principal 'bob' is an observer of this session; observers cannot prompt");

    // The owner's command waits for approval: the UI shows the command, and never a dialog to approve it.
    let dialogShown = false;
    const watch = (screen: string) => {
      if (screen.includes(DIALOG)) dialogShown = true;
      return screen;
    };
    const sent = await phone.request("session/send", { sessionId, content: 'Run it from the phone\n/tool echo-args {"n":1}' });
    const required = await phone.waitForEvent(sessionId, "approval.required");
    const interactionId = (required.payload as { id: string }).id;
    expect((await phone.request("interaction/list", { sessionId })).interactions).toEqual([expect.objectContaining({ id: interactionId, status: "pending", mayDecide: true })]);
    await tui.until((screen) => watch(screen).includes(`Running cat '<<<' '{"n":1}'`), "showed the command waiting");
    // Its interrupt (Esc while the turn works) is refused too: the turn goes on.
    tui.press("Escape");
    await tui.until(() => refusals().includes("turn/interrupt: principal 'bob' is an observer of this session; observers cannot interrupt"), "had its interrupt refused");
    // The phone alone decides it.
    await phone.request("interaction/approve", { sessionId, interactionId });
    const screen = await tui.until((s) => watch(s).includes('Tool echo-args returned: {"n":1}'), "showed the command's output");
    expect(await waitForTerminal(phone, sessionId, sent.turnId)).toMatchObject({ type: "turn.completed" });
    expect(payloadsOf(phone.eventsOf(sessionId), "approval.updated")).toEqual([{ id: interactionId, status: "approved" }]);
    expect(dialogShown).toBe(false);
    expect(screen).not.toContain("You approved codex to run");
    // Never asked: no approval request went to the UI, and everything it was sent is valid for its release.
    const toUi = codexLines().filter(({ direction }) => direction === "server").map(({ message }) => message.method);
    expect(toUi).toContain("item/started");
    expect(toUi).not.toContain("item/commandExecution/requestApproval");
    expect(officialProblems({ transcript: codexLines })).toEqual([]);
    // Nothing the UI typed reached the session.
    expect(JSON.stringify(phone.eventsOf(sessionId))).not.toContain("Let me drive");
  });
});
