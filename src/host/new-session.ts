import type { Attributes, LocalExecutionEnvironmentSnapshot, Reasoning, Snapshot } from "../../generated/tau-v18.js";
import { BOOTSTRAP, catalogSnapshot, effectiveAutoCompactThreshold, personaById } from "./catalog.js";

export interface NewSessionInput {
  sessionId: string;
  attributes: Attributes;
  executionEnvironment: LocalExecutionEnvironmentSnapshot;
  personaId: string;
  reasoning: Reasoning;
  autoCompactThresholdTokens: number | null;
  now?: number;
}

export const SYSTEM_PROMPT_MESSAGE_ID = "system";

/** The first snapshot of a new session: revision 1, only the persona's base prompt, epoch 1. */
export function newSessionSnapshot(input: NewSessionInput): Snapshot {
  const now = input.now ?? Date.now();
  const persona = personaById(input.personaId);
  if (!persona) throw new Error(`unknown persona: ${input.personaId}`);
  return {
    sessionId: input.sessionId,
    attributes: input.attributes,
    createdAt: now,
    revision: 1,
    agentState: { revision: 0, modelContextKey: "ctx-1" },
    lifecycle: "idle",
    costTotal: 0,
    settings: {
      autoCompactThresholdTokens: input.autoCompactThresholdTokens,
      effectiveAutoCompactThresholdTokens: effectiveAutoCompactThreshold(input.autoCompactThresholdTokens),
      personaId: persona.id,
      reasoning: input.reasoning,
    },
    bootstrap: BOOTSTRAP,
    catalog: catalogSnapshot(),
    executionEnvironment: input.executionEnvironment,
    messages: [
      { id: SYSTEM_PROMPT_MESSAGE_ID, state: "committed", modelVisible: true, message: { role: "system", content: persona.systemPrompt, timestamp: now } },
    ],
    turns: {},
    timeline: { epoch: 1, sequence: 0, items: [] },
    tools: {},
    operations: {},
    agents: {},
    facets: {},
  };
}
