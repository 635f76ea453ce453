import type { ParamsWording } from "../model.js";

/**
 * Tau's own sentences for invalid params (v18 `validate*Params` in its session protocol module):
 * one per method and field, tried in Tau's order, sessionId first. A problem that no sentence names
 * exactly is said as `<method> params are invalid: <issues>`, the issues in Tau's parser's words.
 * Each method's sentences sit with its params in methods.ts; these helpers only spell them.
 */

export const NON_EMPTY = "must be a non-empty string";
export const NON_EMPTY_IF_GIVEN = `${NON_EMPTY} when provided`;
export const REASONING_VALUES = "one of none, minimal, low, medium, high, xhigh, or max";
export const ENV_RULES = "must use valid environment variable names and string values without null bytes and cannot override HOME";

/** A field's sentence: `[field, what]` says `<method> params.<field> <what>`; a third `true` appends the issues. */
export type FieldWords = readonly [field: string, what: string, withIssues?: boolean];

/** Tau's words for a method's params, `fields` tried in the order given. */
export const tauWords =
  (...fields: FieldWords[]) =>
  (method: string): ParamsWording => ({
    notObject: `${method} params must be an object`,
    fields: fields.map(([field, what, withIssues]) => ({
      path: field.split("."),
      message: `${method} params.${field} ${what}`,
      ...(withIssues ? { withIssues } : {}),
    })),
    otherwise: `${method} params are invalid`,
  });

/** The same with `sessionId` tried first, as every session method does. */
export const sessionWords = (...fields: FieldWords[]) => tauWords(["sessionId", NON_EMPTY], ...fields);

/** A method Tau words only through its parser's issues (session.setAutoCompactThreshold). */
export const issuesOnly = () => (method: string): ParamsWording => ({ fields: [], otherwise: `${method} params are invalid` });

/** A method whose params must be an empty object: one sentence for any failure. */
export const emptyObjectOnly = () => (method: string): ParamsWording => ({ always: `${method} params must be an empty object`, fields: [], otherwise: `${method} params are invalid` });
