import type fc from "fast-check";
import { describePiece, renderPiece, type Piece } from "./generators/pieces.js";
import type { LiveValues } from "./generators/live-values.js";
import { GatewayProcess } from "./infra/gateway-process.js";
import type { MessageChannel } from "./infra/message-channel.js";
import { AnswerLedger, type DialectAnswers } from "./oracles/answer-ledger.js";
import { Expectation, idKey } from "./oracles/expectation.js";
import { countError, newStats, type FuzzTarget, type RunningTarget, type RunProperty, type TargetContext } from "./target.js";
import type { FuzzSettings } from "./settings.js";

/**
 * A target for any transport that carries a stream of messages both ways (WebSocket, NDJSON over
 * stdio): a case is a few pieces sent on one client connection; the dialect says what each piece
 * is owed, and the case waits until it got exactly that (or the connection closed as it must).
 */

export interface StreamDialect {
  dialect: string;
  answers: DialectAnswers;
  /** Adds what the gateway owes for one text unit it reads. */
  expect(unit: string, expectation: Expectation): void;
  cases(settings: FuzzSettings): fc.Arbitrary<Piece[]>;
  /** A request sent after each case, answered only after everything before it was read. */
  sentinel?(n: number): { text: string; id: unknown };
  /** Brings a new connection to where cases start (e.g. Tau's ready and initialize). */
  handshake(channel: MessageChannel): Promise<void>;
  /** Creates what cases refer to through placeholders (a session), over a prepared connection. */
  prepare(channel: MessageChannel, cwd: string): Promise<LiveValues>;
  /** Whether what prepare() made is still usable (a case may have closed the session); default: it always is. */
  stillUsable?(channel: MessageChannel, live: LiveValues): Promise<boolean>;
  /** create → send → turn completed, on `channel`; throws when that does not work. */
  normalSession(channel: MessageChannel, cwd: string): Promise<void>;
}

export interface StreamTargetSpec {
  name: string;
  /** `tau-gateway` command and its arguments (the upstream, cwd and timeouts are added). */
  command: string;
  args?: string[];
  /** Whether the command takes --default-cwd (default true). */
  defaultCwd?: boolean;
  /** A client connection to the started gateway. */
  connect(gateway: GatewayProcess, baseUrl: string | undefined): Promise<MessageChannel>;
  dialect: StreamDialect;
  properties?: RunProperty[];
}

/** Cases between two checks that the session cases refer to is still there. */
const LIVE_CHECK_EVERY = 50;
/**
 * Cases on one shared session before the next gets a fresh one: its history (hostile values
 * included) grows with every accepted turn, and every snapshot carries all of it.
 */
export const LIVE_ROTATE_EVERY = 250;

export function streamTarget(spec: StreamTargetSpec): FuzzTarget {
  return {
    name: spec.name,
    dialect: spec.dialect.dialect,
    properties: spec.properties,
    start: (context) => startStreamTarget(spec, context),
  };
}

/**
 * Flags every command gets: the recording upstream, short interaction deadlines, and the sessions'
 * directory where the command has one (`acp` takes each session's from its client).
 */
export function gatewayArgs(context: TargetContext, options: { defaultCwd?: boolean } = {}): string[] {
  return [
    "--upstream",
    context.upstream.recorder.url,
    ...(options.defaultCwd === false ? [] : ["--default-cwd", context.upstream.cwd]),
    "--interaction-timeout-ms",
    "2000",
    "--log-level",
    "warn",
  ];
}

async function startStreamTarget(spec: StreamTargetSpec, context: TargetContext): Promise<RunningTarget> {
  const { settings, upstream } = context;
  const { dialect } = spec;
  const { process: gateway, baseUrl } = await GatewayProcess.start(spec.command, [...gatewayArgs(context, { defaultCwd: spec.defaultCwd }), ...(spec.args ?? [])]);
  const stats = newStats();
  let channel: MessageChannel | undefined;
  let sentinels = 0;

  const connected = async (): Promise<MessageChannel> => {
    if (channel && channel.closeCode === undefined) return channel;
    channel = await spec.connect(gateway, baseUrl);
    await dialect.handshake(channel);
    return channel;
  };

  let live: LiveValues;
  try {
    live = await dialect.prepare(await connected(), upstream.cwd);
  } catch (err) {
    await gateway.stop();
    throw err;
  }

  const runCase = async (value: unknown): Promise<string[]> => {
    if (!gateway.alive()) return [`the gateway process is not running (${JSON.stringify(await gateway.exited)}); stderr:\n${gateway.stderr()}`];
    const rotate = stats.cases > 0 && stats.cases % LIVE_ROTATE_EVERY === 0;
    if (rotate || (stats.cases % LIVE_CHECK_EVERY === LIVE_CHECK_EVERY - 1 && dialect.stillUsable && !(await dialect.stillUsable(await connected(), live)))) {
      live = await dialect.prepare(await connected(), upstream.cwd);
    }
    const rendered = (value as Piece[]).map((p) => renderPiece(p, live));
    const open = await connected();
    const delivery = open.delivery(rendered);
    const expectation = new Expectation();
    for (const unit of delivery.units) dialect.expect(unit, expectation);
    if (delivery.closeCode !== undefined) {
      // The connection ends here: what was in flight may be answered, or lost with it.
      expectation.closeCode = delivery.closeCode;
      for (const owed of expectation.owed.values()) owed.min = 0;
      expectation.nullsAtLeast = 0;
    }
    const sentinel = delivery.closeCode === undefined ? dialect.sentinel?.(++sentinels) : undefined;
    const ledger = new AnswerLedger(expectation, dialect.answers, new Set(sentinel ? [idKey(sentinel.id)] : []));
    const collected = collectAnswers(open, ledger, dialect.answers, sentinel, expectation.closeCode !== undefined, settings.answerTimeoutMs);
    open.send(rendered.slice(0, delivery.count));
    if (sentinel) open.sendText(sentinel.text);
    const { finished, sentinelAnswered, problems } = await collected;
    stats.cases++;
    stats.requests += expectation.sent;
    stats.responses += ledger.responses;
    for (const [code, n] of ledger.errorCodes) countError(stats, code, n, ledger.errorSamples.get(code));

    problems.push(...ledger.verdict());
    if (!finished) problems.push(`no complete answer within ${settings.answerTimeoutMs} ms${sentinel && !sentinelAnswered ? " (not even to the runner's own request after the case)" : ""}`);
    if (expectation.closeCode !== undefined && open.closeCode !== expectation.closeCode) {
      problems.push(`the connection should have been closed with ${expectation.closeCode}, got ${open.closeCode ?? "no close"}`);
    }
    if (expectation.closeCode === undefined && open.closeCode !== undefined) problems.push(`the gateway closed the connection (${open.closeCode}) when it had no reason to`);
    if (!gateway.alive()) problems.push(`the gateway process exited (${JSON.stringify(await gateway.exited)}); stderr:\n${gateway.stderr()}`);
    return problems;
  };

  return {
    gateway,
    baseUrl,
    cases: dialect.cases(settings),
    describeCase: (value) => (value as Piece[]).map((p, i) => `  [${i}] ${describePiece(p)}`).join("\n"),
    runCase,
    async normalSession() {
      // On a connection of its own where the transport has several (a stdio process has one).
      const fresh = await spec.connect(gateway, baseUrl);
      if (fresh !== channel) await dialect.handshake(fresh);
      try {
        await dialect.normalSession(fresh, upstream.cwd);
      } finally {
        if (fresh !== channel) await fresh.close();
      }
    },
    async quiesce() {
      await channel?.close();
    },
    stats,
    async stop() {
      await channel?.close();
      await gateway.stop();
    },
  };
}

/**
 * Feeds everything `open` receives to the ledger until the case is complete: every answer owed
 * and the sentinel's in, or the connection closed (as expected, or not). Listens before the case
 * is sent, so nothing is missed.
 */
function collectAnswers(
  open: MessageChannel,
  ledger: AnswerLedger,
  answers: DialectAnswers,
  sentinel: { id: unknown } | undefined,
  closeExpected: boolean,
  timeoutMs: number,
): Promise<{ finished: boolean; sentinelAnswered: boolean; problems: string[] }> {
  const problems: string[] = [];
  let sentinelAnswered = sentinel === undefined;
  return new Promise((resolve) => {
    let settled = false;
    let stopListening = () => undefined as unknown;
    const done = () => open.closeCode !== undefined || (!closeExpected && sentinelAnswered && ledger.complete());
    const finish = (finished: boolean) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      stopListening();
      resolve({ finished, sentinelAnswered, problems });
    };
    const timer = setTimeout(() => finish(false), timeoutMs);
    stopListening = open.onMessage((text) => {
      let message: unknown;
      try {
        message = JSON.parse(text);
      } catch {
        problems.push(`the gateway sent something that is not JSON: ${text.slice(0, 300)}`);
        return;
      }
      for (const m of Array.isArray(message) ? message : [message]) {
        const response = answers.response(m);
        if (sentinel && response && idKey(response.id) === idKey(sentinel.id)) sentinelAnswered = true;
        ledger.receive(m);
      }
      if (done()) finish(true);
    });
    // Messages that arrived before the case was sent are delivered at once, possibly finishing it already.
    if (settled) stopListening();
    void open.closed(timeoutMs).then((code) => {
      if (code !== undefined) finish(true);
    });
  });
}
