/**
 * The approval policy file (`--approval-policy FILE`, YAML or JSON): which calls of the gateway's
 * command tools run without asking, are refused, or need whom. A gateway setting rather than
 * protocol, it is still part of what the registry publishes, so `npm run generate` writes it to
 * `schema/approval-policy.schema.json` for editors and CI to check policy files against.
 */

/** Longest glob a policy may hold: matching stays proportional to the text times this. */
export const POLICY_GLOB_MAX_LENGTH = 512;
/** Most rules a policy may hold (they are tried in order on every call). */
export const POLICY_MAX_RULES = 1_000;
/** Longest deadline a rule may set: a day, safely inside timer range. */
export const POLICY_MAX_DEADLINE_SECONDS = 86_400;

/**
 * The session roles a `require` rule may name as its deciders: those that may answer approvals
 * (docs/approvals.md#roles). An observer never decides, and any other word would name nobody, so a
 * call it guarded could never be approved.
 */
export const POLICY_DECIDING_ROLES = ["owner", "controller"] as const;

const glob = { type: "string", minLength: 1, maxLength: POLICY_GLOB_MAX_LENGTH, description: "`*` any run of characters, `?` one, `\\` escapes the next" } as const;
const name = { type: "string", minLength: 1, maxLength: 128, pattern: "^[^\\u0000-\\u001f]*$" } as const;

export const APPROVAL_POLICY_SCHEMA = {
  $schema: "https://json-schema.org/draft/2019-09/schema",
  $id: "https://tau-gateway.dev/schema/approval-policy.schema.json",
  title: "tau-gateway approval policy",
  description: "Rules for the gateway's command tools, tried in order: the first rule that matches a call decides it; a call no rule matches is decided by the session's approval mode, as without a policy.",
  type: "object",
  required: ["version", "rules"],
  additionalProperties: false,
  properties: {
    $schema: { type: "string" },
    version: {
      description: "The policy's version: part of every call digest, so a decision made under one version never counts under another.",
      oneOf: [{ type: "string", minLength: 1, maxLength: 128 }, { type: "integer", minimum: 0 }],
    },
    rules: {
      type: "array",
      maxItems: POLICY_MAX_RULES,
      items: {
        type: "object",
        required: ["name", "action"],
        additionalProperties: false,
        properties: {
          name: { ...name, description: "Named in refusals, receipts and the audit" },
          description: { type: "string" },
          match: {
            type: "object",
            additionalProperties: false,
            description: "Every condition given must hold; a rule without one matches every call.",
            properties: {
              tool: { ...glob, description: "Glob over the tool's name" },
              command: { ...glob, description: "Glob over the command line the tool runs (its command and configured args, joined by spaces)" },
              arguments: {
                type: "object",
                description: "JSON Pointer into the call's arguments → glob over the value there (a string as is, anything else as JSON); an absent value never matches",
                propertyNames: { pattern: "^(/.*)?$", maxLength: 512 },
                additionalProperties: glob,
              },
              session: {
                type: "object",
                additionalProperties: false,
                properties: {
                  tenant: { ...glob, description: "Glob over the session's tenant (`default` for a gateway with one token or none)" },
                  approvalMode: {
                    description: "The session's approval mode now: one or a list",
                    oneOf: [
                      { enum: ["on_request", "auto", "never", "plan"] },
                      { type: "array", minItems: 1, uniqueItems: true, items: { enum: ["on_request", "auto", "never", "plan"] } },
                    ],
                  },
                  cwd: { ...glob, description: "Glob over the session's working directory" },
                },
              },
            },
          },
          action: { enum: ["allow", "deny", "require"] },
          reason: { type: "string", maxLength: 1024, description: "Said with a refusal (deny, or a require whose deadline denies)" },
          approvers: {
            description: "Who may decide (require only): `any` controller of the session, or the principals (token ids) and roles listed",
            oneOf: [
              { const: "any" },
              {
                type: "object",
                additionalProperties: false,
                minProperties: 1,
                properties: {
                  principals: { type: "array", minItems: 1, uniqueItems: true, items: name },
                  roles: { type: "array", minItems: 1, uniqueItems: true, items: { enum: POLICY_DECIDING_ROLES, description: "A session role that decides" } },
                },
              },
            ],
          },
          count: { type: "integer", minimum: 1, maximum: 100, description: "Distinct approvers needed (require only; default 1)" },
          deadline: { type: "integer", minimum: 1, maximum: POLICY_MAX_DEADLINE_SECONDS, description: "Seconds the call waits for its approvers (require only; default the gateway's interaction deadline)" },
          onDeadline: { enum: ["deny", "allow"], description: "What the deadline decides (require only; default deny)" },
        },
      },
    },
  },
} as const;
