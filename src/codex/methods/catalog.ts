import type {
  AccountBedrockCheckGovCloudRequirementsResult,
  AccountReadResult,
  CollaborationModeListResult,
  ConfigReadResult,
  ConfigRequirementsReadResult,
  HooksListParams,
  HooksListResult,
  Model,
  ModelListParams,
  ModelListResult,
  PermissionProfileListResult,
  PluginInstalledResult,
  SkillsListResult,
} from "../../../generated/codex-v2.js";
import type { Catalog, Snapshot } from "../../../generated/tau-v18.js";
import type { CodexMethodContext } from "../context.js";
import { hostCatalogSnapshot } from "../host-catalog.js";

/**
 * What a Codex client reads before its first thread: no account is needed, the models are the Tau
 * host's personas, and the gateway has no configuration, requirements, permission profiles,
 * skills, hooks, plugins or Bedrock account of its own to report.
 */

export async function accountRead(): Promise<AccountReadResult> {
  return { account: null, requiresOpenaiAuth: false };
}

/** The Tau host's personas (a persona chooses the model and prompt); the one a session runs is the default. */
export async function modelList({ services }: CodexMethodContext, params: ModelListParams): Promise<ModelListResult> {
  const snapshot = await hostCatalogSnapshot(services.core);
  const data = snapshot ? personaModels(snapshot) : [fallbackModel()];
  const limit = params.limit ?? data.length;
  return { data: data.slice(0, Math.max(limit, 0)), nextCursor: null };
}

export async function configRead(): Promise<ConfigReadResult> {
  return { config: {}, origins: {} };
}

export async function configRequirementsRead(): Promise<ConfigRequirementsReadResult> {
  return { requirements: null };
}

/** Experimental (the registry says so): only connections that opted in reach it. */
export async function collaborationModeList(): Promise<CollaborationModeListResult> {
  return { data: [{ name: "Default", mode: "default" }] };
}

export async function permissionProfileList(): Promise<PermissionProfileListResult> {
  return { data: [], nextCursor: null };
}

export async function skillsList(): Promise<SkillsListResult> {
  return { data: [] };
}

/** The gateway runs no Codex hooks: per working directory asked about (the thread's, or the default one), none. */
export async function hooksList({ services, peer }: CodexMethodContext, params: HooksListParams): Promise<HooksListResult> {
  const cwds = params.threadId
    ? [(await services.threads.open(params.threadId, peer.tenant)).snapshot.executionEnvironment.cwd]
    : params.cwds?.length
      ? params.cwds
      : [services.workspaces.defaultFor(peer.tenant)];
  return { data: cwds.map((cwd) => ({ cwd, hooks: [], errors: [], warnings: [] })) };
}

export async function pluginInstalled(): Promise<PluginInstalledResult> {
  return { marketplaces: [], marketplaceLoadErrors: [] };
}

/** Experimental (the registry says so). No Bedrock sign-in, so no GovCloud region and nothing to warn about. */
export async function bedrockCheckGovCloudRequirements(): Promise<AccountBedrockCheckGovCloudRequirementsResult> {
  return { isGovCloud: false, shouldWarn: false };
}

function personaModels(snapshot: Snapshot): Model[] {
  const catalog: Catalog = snapshot.catalog;
  const inputModalities = snapshot.bootstrap.model.input;
  const defaultId = catalog.personas.some((p) => p.id === snapshot.settings.personaId) ? snapshot.settings.personaId : catalog.personas[0]?.id;
  return catalog.personas.map((persona) => ({
    id: persona.id,
    model: persona.id,
    displayName: persona.label,
    description: persona.description ?? `Tau persona ${persona.label}`,
    hidden: false,
    isDefault: persona.id === defaultId,
    defaultReasoningEffort: "medium",
    supportedReasoningEfforts: (persona.allowedReasoningLevels ?? []).map((level) => ({ reasoningEffort: level, description: `Tau reasoning level ${level}` })),
    inputModalities,
  }));
}

/** Before any session exists there is no catalog to read: the host's default persona stands for the models. */
function fallbackModel(): Model {
  return {
    id: "default",
    model: "default",
    displayName: "Tau",
    description: "The Tau host's default persona",
    hidden: false,
    isDefault: true,
    defaultReasoningEffort: "medium",
    supportedReasoningEfforts: [],
    inputModalities: ["text"],
  };
}
