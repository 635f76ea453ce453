import { DEFAULT_DRAIN_TIMEOUT_MS } from "../../gateway/drain.js";
import { limitSettings } from "../limit-settings.js";
import { recordFileSettings } from "../record-settings.js";
import { bridgeSettings, integer, logSettings, storeSettings, upstreamSettings, type SettingSpec, type SettingValues } from "../settings.js";

const { toolsConfig, approvalPolicyFile, auditDir, eventRetention, interactionTimeoutMs } = bridgeSettings;

/**
 * The settings every stdio command has (`stdio`, `app-server`, `acp`), besides `--remote` and
 * `--remote-token`, which the skeleton adds with the dialect's route: the Tau hosts and the store,
 * what the bridge core reads, the drain, `--record FILE`, the per-connection limits and the log.
 */
export const stdioCommandSettings = {
  ...upstreamSettings,
  ...storeSettings,
  toolsConfig,
  approvalPolicyFile,
  auditDir,
  eventRetention,
  interactionTimeoutMs,
  drainTimeout: { flag: "drain-timeout", default: DEFAULT_DRAIN_TIMEOUT_MS, parse: integer(0) },
  ...recordFileSettings,
  maxInflight: limitSettings.maxInflight,
  maxMessageBytes: limitSettings.maxMessageBytes,
  // stdout belongs to the protocol and stderr is often shown to a user: only problems by default.
  logLevel: { ...logSettings.logLevel, default: "warn" as SettingValues<typeof logSettings>["logLevel"] },
} satisfies Record<string, SettingSpec<unknown>>;

export type StdioCommandSettings = typeof stdioCommandSettings;

/** A dialect's own settings of its stdio command, on top of the common ones. */
export type SettingSpecs = Record<string, SettingSpec<unknown>>;

/** The settings of a stdio command whose own are `Own`. */
export type StdioSettingValues<Own extends SettingSpecs> = SettingValues<StdioCommandSettings & Own> & { remote?: string; remoteToken?: string };
