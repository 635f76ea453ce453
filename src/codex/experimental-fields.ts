import { EXPERIMENTAL_FIELDS } from "../../generated/codex-v2.js";

/**
 * The first experimental params field (the registry's `experimentalFields` of the method) `params`
 * gives a value, as Codex names it (`thread/start.dynamicTools`); null counts as no value.
 */
export function experimentalFieldUsed(method: string, params: object): string | undefined {
  const fields: readonly string[] = Object.hasOwn(EXPERIMENTAL_FIELDS, method) ? EXPERIMENTAL_FIELDS[method as keyof typeof EXPERIMENTAL_FIELDS]! : [];
  const values = params as Record<string, unknown>;
  const field = fields.find((name) => values[name] !== undefined && values[name] !== null);
  return field === undefined ? undefined : `${method}.${field}`;
}
