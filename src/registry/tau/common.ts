import { describe, int, literal, nonEmpty, noNul, nullable, obj, oneOfStrings, opt, record, ref, str, until, union, MAX_SAFE_INTEGER, type Schema } from "../schema.js";
import { EPHEMERAL_TOOL_NAMES } from "./host-tools.js";

/**
 * Small shared Tau types (spec §4 "Common types", §4.1, §5.1, §5.9). Everything here is referenced
 * by name from methods, the snapshot and the server messages.
 */

/** The cloudflare-sandbox environment (until v14): its input and snapshot differ only in `extra`. */
const cloudflareSandbox = (extra: Record<string, Schema>) =>
  until(14, obj({ kind: literal("cloudflare-sandbox"), bridgeId: nonEmpty(), sandboxId: nonEmpty(), ...extra }), "cloudflare-sandbox removed in v15");

export const MAX_ATTRIBUTES = 32;
export const MAX_ATTRIBUTE_KEY_CHARS = 64;
export const MAX_ATTRIBUTE_VALUE_CHARS = 1024;
export const MIN_AUTO_COMPACT_THRESHOLD_TOKENS = 50_000;

/** Any safe integer, negative included (zod's `.int()` allows the whole safe range). */
export const anyInt = (): Schema => int({ min: -MAX_SAFE_INTEGER });

/**
 * `NonEmpty` that also rejects NUL anywhere (process strings: exec command and cwd). The leading
 * run may only hold whitespace and the first non-blank character ends it, so a backtracking
 * engine never retries a split point: matching stays linear in the length of the string.
 */
export const nonEmptyNoNul = (extra: Schema = {}): Schema =>
  nonEmpty({ pattern: "^\\s*[^\\s\\u0000][^\\u0000]*$", ...extra });

/**
 * `NonEmpty` on one line (notice titles): at least one non-blank character, no CR or LF. Linear
 * for the same reason: the leading run takes only blanks other than CR and LF.
 */
export const nonEmptySingleLine = (extra: Schema = {}): Schema =>
  nonEmpty({ pattern: "^[^\\S\\r\\n]*\\S[^\\r\\n]*$", ...extra });

/** `null` = the model-based default; numeric strings are rejected, as Tau does. */
export const autoCompactThreshold = (): Schema =>
  describe(
    "Configured auto-compaction threshold: a safe integer of at least 50,000, or null for the model-based default.",
    nullable(int({ min: MIN_AUTO_COMPACT_THRESHOLD_TOKENS })),
  );

export const commonDefinitions: Record<string, Schema> = {
  Reasoning: oneOfStrings(["none", "minimal", "low", "medium", "high", "xhigh", "max"]),

  SessionLifecycle: oneOfStrings(["idle", "running"]),

  CompactionMode: describe(
    "What a manual compaction keeps besides the summary: nothing, or the last finished assistant reply.",
    oneOfStrings(["summary-only", "summary-and-last"]),
  ),

  CompactionKind: describe("Who started a compaction: the host on its own (auto) or a client (manual).", oneOfStrings(["auto", "manual"])),

  EnvVars: record(noNul(), {
    keys: {
      type: "string",
      pattern: "^[A-Za-z_][A-Za-z0-9_]*$",
      // The execution environment owns HOME; Tau refuses to let a client override it.
      not: { const: "HOME" },
    },
  }),

  AbsPath: nonEmpty({ pattern: "^/", description: "Absolute path inside the execution environment." }),

  Attributes: describe(
    "Immutable session attributes, required on create even when empty (conventional keys: source, repository).",
    record(str({ maxLength: MAX_ATTRIBUTE_VALUE_CHARS }), {
      keys: str({ minLength: 1, maxLength: MAX_ATTRIBUTE_KEY_CHARS }),
      max: MAX_ATTRIBUTES,
    }),
  ),

  TurnOutcome: union(
    obj({ status: literal("completed"), stopReason: oneOfStrings(["stop", "length", "toolUse"]) }),
    obj({ status: literal("failed"), stopReason: literal("error"), errorMessage: opt(str()) }),
    obj({ status: literal("aborted"), stopReason: literal("aborted") }),
    obj({
      status: literal("blocked"),
      reason: literal("auto-compaction-failed"),
      message: str(),
    }),
  ),

  TurnResult: obj({ turn: ref("TurnOutcome") }),

  UserTurnResult: obj({ userHistoryEntryId: nonEmpty(), turn: ref("TurnOutcome") }),

  SettingsUpdateResult: obj({ revision: int({ min: 1 }), settings: ref("Settings") }),

  ExecutionEnvironmentInput: union(
    ref("LocalExecutionEnvironmentInput"),
    cloudflareSandbox({ cwd: ref("AbsPath") }),
    ref("FlySpriteExecutionEnvironmentInput"),
  ),

  LocalExecutionEnvironmentInput: obj(
    { kind: literal("local"), cwd: ref("AbsPath"), env: opt(ref("EnvVars")) },
    { description: "Local `env` is persisted with the session, so it is no place for secrets." },
  ),

  FlySpriteExecutionEnvironmentInput: obj({
    kind: literal("fly-sprite"),
    apiId: until(15, nonEmpty(), "removed somewhere in 16–18; the host now uses its configured connection"),
    spriteName: nonEmpty(),
    cwd: ref("AbsPath"),
  }),

  ExecutionEnvironmentSnapshot: union(
    ref("LocalExecutionEnvironmentSnapshot"),
    cloudflareSandbox({ cwd: nonEmpty(), home: nonEmpty() }),
    ref("FlySpriteExecutionEnvironmentSnapshot"),
  ),

  LocalExecutionEnvironmentSnapshot: obj({
    kind: literal("local"),
    cwd: nonEmpty(),
    home: nonEmpty(),
    env: opt(ref("EnvVars")),
  }),

  FlySpriteExecutionEnvironmentSnapshot: obj({
    kind: literal("fly-sprite"),
    apiId: until(15, nonEmpty(), "removed somewhere in 16–18"),
    spriteName: nonEmpty(),
    cwd: nonEmpty(),
    home: nonEmpty(),
  }),

  EphemeralAgentTool: oneOfStrings(EPHEMERAL_TOOL_NAMES),
};
