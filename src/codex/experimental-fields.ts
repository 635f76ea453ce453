/**
 * The params fields of the methods the gateway serves that only Codex's experimental API has
 * (0.169.0: in the `--experimental` schema bundle, not in the stable one). Codex refuses a value
 * for one from a connection that did not set capabilities.experimentalApi, naming it
 * `<method>.<field>`; null counts as no value. test/unit/codex-experimental-fields.test.ts holds
 * this list to the official bundles.
 */
export const EXPERIMENTAL_FIELDS: Readonly<Record<string, readonly string[]>> = {
  "thread/start": [
    "allowProviderModelFallback",
    "daybreakEnabled",
    "dynamicTools",
    "environments",
    "experimentalRawEvents",
    "historyMode",
    "mockExperimentalField",
    "multiAgentMode",
    "permissions",
    "projectId",
    "runtimeWorkspaceRoots",
    "selectedCapabilityRoots",
  ],
  "thread/resume": ["history", "initialTurnsPage", "path", "permissions", "runtimeWorkspaceRoots"],
  "thread/list": ["ancestorThreadId", "attachedToThreadId", "includeAttachedThreads", "parentThreadId", "projectId"],
  "turn/start": [
    "additionalContext",
    "collaborationMode",
    "cyberAccessProgram",
    "environments",
    "multiAgentMode",
    "permissions",
    "responsesapiClientMetadata",
    "responsesapiClientMetadataPatch",
    "runtimeWorkspaceRoots",
  ],
  "turn/steer": ["additionalContext", "responsesapiClientMetadata", "responsesapiClientMetadataPatch"],
};

/** The first experimental field `params` of `method` gives a value, as Codex names it (`thread/start.dynamicTools`). */
export function experimentalFieldUsed(method: string, params: object): string | undefined {
  const values = params as Record<string, unknown>;
  const field = EXPERIMENTAL_FIELDS[method]?.find((name) => values[name] !== undefined && values[name] !== null);
  return field === undefined ? undefined : `${method}.${field}`;
}
