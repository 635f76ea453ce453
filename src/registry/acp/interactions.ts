import { opt, type Schema } from "../schema.js";
import { acpObj, arrayOf, arrayOrNull, boolean, closedStrings, integer, number, orNull, otherTag, ref, refOrNull, string, tagged } from "./shapes.js";

/**
 * What the agent asks the client (protocol §8, §10): permission for a tool call, with the four
 * kinds of option, and elicitation, a form (or a URL) the user fills in.
 */

export const PERMISSION_OPTION_KINDS = ["allow_once", "allow_always", "reject_once", "reject_always"] as const;

const PROPERTY_TYPES = ["string", "number", "integer", "boolean", "array"];

/** Title, description and the rest every elicitation property schema starts with. */
const described = { title: opt(orNull("string")), description: opt(orNull("string")) };

export const interactionDefinitions: Record<string, Schema> = {
  // ── Permission ──
  PermissionOption: acpObj({ optionId: ref("PermissionOptionId"), name: string(), kind: ref("PermissionOptionKind") }),
  PermissionOptionId: string(),
  PermissionOptionKind: closedStrings(...PERMISSION_OPTION_KINDS),
  RequestPermissionOutcome: {
    oneOf: [
      { type: "object", properties: { outcome: { type: "string", const: "cancelled" } }, required: ["outcome"] },
      tagged("outcome", "selected", "SelectedPermissionOutcome"),
    ],
  },
  SelectedPermissionOutcome: acpObj({ optionId: ref("PermissionOptionId") }),

  // ── Elicitation: where it applies and how ──
  ElicitationSessionScope: { type: "object", properties: { sessionId: ref("SessionId"), toolCallId: refOrNull("ToolCallId") }, required: ["sessionId"] },
  ElicitationRequestScope: { type: "object", properties: { requestId: ref("RequestId") }, required: ["requestId"] },
  ElicitationFormMode: {
    type: "object",
    properties: { requestedSchema: ref("ElicitationSchema") },
    anyOf: [ref("ElicitationSessionScope"), ref("ElicitationRequestScope")],
    required: ["requestedSchema"],
  },
  ElicitationUrlMode: {
    type: "object",
    properties: { elicitationId: ref("ElicitationId"), url: string() },
    anyOf: [ref("ElicitationSessionScope"), ref("ElicitationRequestScope")],
    required: ["elicitationId", "url"],
  },
  ElicitationId: string(),

  // ── Elicitation: the form ──
  ElicitationSchema: acpObj({
    type: opt(ref("ElicitationSchemaType")),
    title: opt(orNull("string")),
    properties: opt({ type: "object", additionalProperties: ref("ElicitationPropertySchema") }),
    required: opt(arrayOrNull(string())),
    description: opt(orNull("string")),
  }),
  ElicitationSchemaType: closedStrings("object"),
  ElicitationPropertySchema: {
    anyOf: [
      tagged("type", "string", "StringPropertySchema"),
      tagged("type", "number", "NumberPropertySchema"),
      tagged("type", "integer", "IntegerPropertySchema"),
      tagged("type", "boolean", "BooleanPropertySchema"),
      tagged("type", "array", "MultiSelectPropertySchema"),
      otherTag("type", PROPERTY_TYPES, { additionalProperties: true }),
    ],
  },
  StringPropertySchema: acpObj({
    ...described,
    minLength: opt(orNull("integer", { minimum: 0 })),
    maxLength: opt(orNull("integer", { minimum: 0 })),
    pattern: opt(orNull("string")),
    format: opt(refOrNull("StringFormat")),
    default: opt(orNull("string")),
    enum: opt(arrayOrNull(string())),
    oneOf: opt(arrayOrNull(ref("EnumOption"))),
  }),
  StringFormat: closedStrings("email", "uri", "date", "date-time"),
  EnumOption: acpObj({ const: string(), title: string(), description: opt(orNull("string")) }),
  NumberPropertySchema: acpObj({ ...described, minimum: opt(orNull("number")), maximum: opt(orNull("number")), default: opt(orNull("number")) }),
  IntegerPropertySchema: acpObj({ ...described, minimum: opt(orNull("integer")), maximum: opt(orNull("integer")), default: opt(orNull("integer")) }),
  BooleanPropertySchema: acpObj({ ...described, default: opt(orNull("boolean")) }),
  MultiSelectPropertySchema: acpObj({
    ...described,
    minItems: opt(orNull("integer", { minimum: 0 })),
    maxItems: opt(orNull("integer", { minimum: 0 })),
    items: ref("MultiSelectItems"),
    default: opt(arrayOrNull(string())),
  }),
  MultiSelectItems: {
    anyOf: [tagged("type", "string", "StringMultiSelectItems"), otherTag("type", ["string"], { additionalProperties: true }), ref("TitledMultiSelectItems")],
  },
  StringMultiSelectItems: acpObj({ enum: arrayOf(string()) }),
  TitledMultiSelectItems: acpObj({ anyOf: arrayOf(ref("EnumOption")) }),

  // ── Elicitation: the answer ──
  ElicitationAcceptAction: { type: "object", properties: { content: orNull("object", { additionalProperties: ref("ElicitationContentValue") }) } },
  ElicitationContentValue: { anyOf: [string(), integer(), number(), boolean(), arrayOf(string())] },
};
