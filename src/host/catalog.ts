import type { Bootstrap, Catalog, ModelInfo, Persona, Settings } from "../../generated/tau-v18.js";

/**
 * What the embedded host offers every session: one scripted model, a small persona catalog and a
 * few prompt templates. Fixed data, so snapshots are reproducible and `session.reload` has
 * something real to count.
 */

/** Tau subtracts this from the model's context window for the default auto-compaction threshold. */
export const AUTO_COMPACT_RESERVE_TOKENS = 16384;

export const SCRIPTED_MODEL: ModelInfo = {
  id: "scripted-1",
  name: "Scripted agent",
  api: "scripted",
  provider: "tau-gateway",
  baseUrl: "",
  reasoning: true,
  input: ["text"],
  // Dollars per million tokens: 0.000001 per token.
  cost: { input: 1, output: 1, cacheRead: 0, cacheWrite: 0 },
  contextWindow: 200000,
  maxTokens: 32000,
};

/** Cost of one token, input or output. */
export const COST_PER_TOKEN = 0.000001;

/** Sub-agents can start (the /subagent directives), so the prompt carries their system prompt (spec §5.1). */
export const BOOTSTRAP: Bootstrap = {
  model: SCRIPTED_MODEL,
  prompt: { environmentTag: "local", subagentSystemPrompt: "You are a sub-agent of Tau's scripted agent. You work on one task and answer with its result." },
};

interface PersonaDefinition extends Persona {
  systemPrompt: string;
}

const PERSONAS: PersonaDefinition[] = [
  {
    id: "default",
    label: "Default",
    description: "General-purpose scripted assistant.",
    subagentLaunchModels: [SCRIPTED_MODEL.id],
    source: "builtin",
    systemPrompt: "You are Tau's scripted agent. You echo user text and follow /directives deterministically.",
  },
  {
    id: "reviewer",
    label: "Reviewer",
    description: "Code-review persona; the scripted agent answers the same way.",
    subagentLaunchModels: [SCRIPTED_MODEL.id],
    source: "builtin",
    systemPrompt: "You are Tau's scripted agent in the reviewer persona. You echo user text and follow /directives deterministically.",
  },
];

const PROMPTS: Array<{ id: string; label: string; body: string }> = [
  { id: "review", label: "Review", body: "Review the current changes and list problems, most important first." },
  { id: "explain", label: "Explain", body: "Explain what the code in the working directory does, briefly." },
];

export const DEFAULT_PERSONA_ID = "default";

export function personaById(id: string): PersonaDefinition | undefined {
  return PERSONAS.find((p) => p.id === id);
}

export function promptBody(id: string): string | undefined {
  return PROMPTS.find((p) => p.id === id)?.body;
}

export function catalogSnapshot(): Catalog {
  return {
    personas: PERSONAS.map(({ systemPrompt: _prompt, ...persona }) => persona),
    prompts: PROMPTS.map(({ id, label }) => ({ id, label })),
    skills: [],
    mcpServers: [],
  };
}

export function catalogCounts(): { personas: number; prompts: number; skills: number } {
  const catalog = catalogSnapshot();
  return { personas: catalog.personas.length, prompts: catalog.prompts.length, skills: catalog.skills.length };
}

/** min(configured ?? ∞, contextWindow − 16384) (spec §5.1). */
export function effectiveAutoCompactThreshold(configured: number | null): number {
  const modelDefault = SCRIPTED_MODEL.contextWindow - AUTO_COMPACT_RESERVE_TOKENS;
  return configured === null ? modelDefault : Math.min(configured, modelDefault);
}

export function settingsWith(settings: Settings, update: Partial<Pick<Settings, "personaId" | "reasoning" | "autoCompactThresholdTokens">>): Settings {
  const next = { ...settings, ...update };
  return { ...next, effectiveAutoCompactThresholdTokens: effectiveAutoCompactThreshold(next.autoCompactThresholdTokens) };
}
