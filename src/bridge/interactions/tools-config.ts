import type { ValidateFunction } from "ajv/dist/2019.js";
import { ajv2019 } from "../../shared/lazy-ajv.js";
import { HOST_TOOL_NAMES } from "../../registry/tau/index.js";
import { configFileError, parseConfigJson, readConfigFile } from "../../validation/config-files.js";
import { explain, formatIssue } from "../../validation/issues.js";
import { compileArgumentSchema } from "./argument-schemas.js";
import { GATEWAY_TOOL_NAMES } from "./tool-names.js";

/**
 * The operator's command tools (`--tools-config FILE`): tools the gateway advertises to Tau and
 * runs, once approved, with `session.exec` in the session's execution environment. The file is a
 * gateway setting, not protocol, so its schema lives here rather than in the registry.
 */
export interface CommandToolConfig {
  name: string;
  description: string;
  /** JSON Schema of the arguments (object root); the model sees it and the gateway enforces it. */
  parameters: object;
  /** Program to run; the arguments arrive as JSON on its stdin, never on a command line. */
  command: string;
  args?: string[];
  /** Limit on one run; default DEFAULT_COMMAND_TIMEOUT_MS. */
  timeoutMs?: number;
}

/** How long a command tool may run when its config does not say. */
export const DEFAULT_COMMAND_TIMEOUT_MS = 60_000;
/** Upper bound on `timeoutMs`: a day, far beyond any sensible tool and safely inside timer range. */
export const MAX_COMMAND_TIMEOUT_MS = 86_400_000;

/** Provider tool-name rules (the strictest common ones), so every model accepts the name. */
export const TOOL_NAME_PATTERN = "^[A-Za-z0-9_-]{1,64}$";
const NO_NUL = "^[^\\u0000]*$";

const TOOLS_FILE_SCHEMA = {
  type: "object",
  required: ["tools"],
  additionalProperties: false,
  properties: {
    $schema: { type: "string" },
    tools: {
      type: "array",
      items: {
        type: "object",
        required: ["name", "description", "parameters", "command"],
        additionalProperties: false,
        properties: {
          name: { type: "string", pattern: TOOL_NAME_PATTERN },
          description: { type: "string" },
          parameters: {
            type: "object",
            required: ["type"],
            properties: { type: { const: "object" } },
          },
          command: { type: "string", minLength: 1, pattern: NO_NUL },
          args: { type: "array", items: { type: "string", pattern: NO_NUL } },
          timeoutMs: { type: "integer", minimum: 1, maximum: MAX_COMMAND_TIMEOUT_MS },
        },
      },
    },
  },
} as const;

let compiledCheck: ValidateFunction | undefined;

/** Compiled on first use: a gateway without such a file never pays for the compile (ajv checks the schema first, against a meta-schema it compiles too). */
const checkFile = (): ValidateFunction => (compiledCheck ??= new (ajv2019())({ strict: true, allErrors: true, verbose: true }).compile(TOOLS_FILE_SCHEMA));

/** Reads and validates a tools file; errors name the file and the field. */
export async function loadToolsConfig(path: string): Promise<CommandToolConfig[]> {
  return parseToolsConfig(await readConfigFile(path, "the tools config"), path);
}

/** Validates the text of a tools file; `source` names it in errors. */
export function parseToolsConfig(text: string, source: string): CommandToolConfig[] {
  const document = parseConfigJson(text, source);
  const check = checkFile();
  if (!check(document)) throw configFileError(source, explain(check.errors).map(formatIssue));
  const tools = (document as { tools: CommandToolConfig[] }).tools;
  const problems: string[] = [];
  const firstIndex = new Map<string, number>();
  tools.forEach((tool, index) => {
    const at = `/tools/${index}`;
    if (GATEWAY_TOOL_NAMES.includes(tool.name)) {
      problems.push(`${at}/name: ${JSON.stringify(tool.name)} is reserved for the gateway's own tool`);
    } else if (HOST_TOOL_NAMES.includes(tool.name)) {
      problems.push(`${at}/name: ${JSON.stringify(tool.name)} is a Tau host tool name`);
    }
    const earlier = firstIndex.get(tool.name);
    if (earlier !== undefined) problems.push(`${at}/name: ${JSON.stringify(tool.name)} is already used by /tools/${earlier}`);
    else firstIndex.set(tool.name, index);
    try {
      compileArgumentSchema(tool.parameters);
    } catch (error) {
      problems.push(`${at}/parameters: not a usable JSON Schema: ${(error as Error).message}`);
    }
  });
  if (problems.length > 0) throw configFileError(source, problems);
  return tools.map((tool) => ({ ...tool }));
}
