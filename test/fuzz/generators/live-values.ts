import fc from "fast-check";

/**
 * Values that reach past the first check: a session that exists, a directory that exists, texts
 * the scripted agent acts on. Generators use placeholders (the session does not exist before the
 * gateway runs); each case's text is rendered with the values of the running target.
 */

export const SESSION_PLACEHOLDER = "⟦session⟧";
export const CWD_PLACEHOLDER = "⟦cwd⟧";

export interface LiveValues {
  sessionId: string;
  cwd: string;
}

export function substituteLiveValues(text: string, live: LiveValues): string {
  // Inside JSON text: both values are JSON-escaped, without their quotes.
  const escaped = (s: string) => JSON.stringify(s).slice(1, -1);
  return text.replaceAll(SESSION_PLACEHOLDER, escaped(live.sessionId)).replaceAll(CWD_PLACEHOLDER, escaped(live.cwd));
}

/**
 * Messages the scripted agent turns into streamed text, thinking, a tool call, a failure, a short
 * pause, a notice (never a long /sleep: a turn parked for minutes would read as a hang).
 */
const SCRIPTED_TEXTS = [
  "hello",
  "/think pondering\nanswer",
  "/bash echo fuzz",
  "/fail boom",
  "/sleep 5\nlate",
  "/length",
  "/notice warn careful now",
  '/tool ask_user {"question":"which?"}',
  '/tool submit_plan {"plan":"1. do it"}',
  "/tool no_such_tool {}",
];

/** Commands for session.exec that finish at once and touch nothing outside the session's temporary directory. */
const HARMLESS_COMMANDS = ["true", "echo fuzz", "pwd", "exit 3", "printf '%s' x", "echo out; echo err >&2"];

/** Property-name hooks for schemaValues (see schema-values.ts). Commands are never random: they are run. */
export function liveProperty(property: string): { values: fc.Arbitrary<unknown>; only?: boolean } | undefined {
  switch (property) {
    case "sessionId":
    case "threadId":
      return { values: fc.constant(SESSION_PLACEHOLDER) };
    case "cwd":
    case "workspacePath":
      return { values: fc.constant(CWD_PLACEHOLDER) };
    case "text":
    case "content":
      return { values: fc.constantFrom(...SCRIPTED_TEXTS) };
    case "command":
      return { values: fc.constantFrom(...HARMLESS_COMMANDS), only: true };
    default:
      return undefined;
  }
}
