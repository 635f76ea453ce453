import { arr, bool, int, literal, num, obj, oneOfStrings, opt, record, ref, str, type Schema } from "../schema.js";
import { META } from "./jsonrpc.js";

/**
 * The shared types of MCP (revision 2025-11-25, the newest the SDK negotiates) that the gateway's
 * surface uses, with the official schema's type names: who the peers are and what they can do,
 * content blocks, tools, resources, elicitation forms and log levels. Objects admit members they
 * do not list (newer revisions add some); what the gateway sends is checked in its tests against
 * the official schema shipped in @modelcontextprotocol/sdk.
 */

const meta = { _meta: opt(META) };
/** An object capability: present means supported, its members refine it. */
const capability = (props: Record<string, unknown> = {}) => obj(props);

export const LOGGING_LEVELS = ["debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"] as const;

export const typeDefinitions: Record<string, Schema> = {
  // ── Who the peers are and what they can do ──
  Icon: obj({ src: str(), mimeType: opt(str()), sizes: opt(arr(str())), theme: opt(oneOfStrings(["light", "dark"])) }),
  Implementation: obj({
    name: str(),
    title: opt(str()),
    version: str(),
    description: opt(str()),
    websiteUrl: opt(str()),
    icons: opt(arr(ref("Icon"))),
  }),
  ClientCapabilities: obj({
    experimental: opt(record({ type: "object" })),
    roots: opt(capability({ listChanged: opt(bool()) })),
    sampling: opt(capability()),
    elicitation: opt(capability({ form: opt(capability()), url: opt(capability()) })),
    tasks: opt(capability()),
  }),
  ServerCapabilities: obj({
    experimental: opt(record({ type: "object" })),
    logging: opt(capability()),
    completions: opt(capability()),
    prompts: opt(capability({ listChanged: opt(bool()) })),
    resources: opt(capability({ subscribe: opt(bool()), listChanged: opt(bool()) })),
    tools: opt(capability({ listChanged: opt(bool()) })),
  }),

  // ── Content ──
  Role: oneOfStrings(["user", "assistant"]),
  Annotations: obj({ audience: opt(arr(ref("Role"))), priority: opt(num({ min: 0, max: 1 })), lastModified: opt(str()) }),
  TextContent: obj({ type: literal("text"), text: str(), annotations: opt(ref("Annotations")), ...meta }),
  ImageContent: obj({ type: literal("image"), data: str(), mimeType: str(), annotations: opt(ref("Annotations")), ...meta }),
  AudioContent: obj({ type: literal("audio"), data: str(), mimeType: str(), annotations: opt(ref("Annotations")), ...meta }),
  ResourceLink: obj({
    type: literal("resource_link"),
    uri: str(),
    name: str(),
    title: opt(str()),
    description: opt(str()),
    mimeType: opt(str()),
    size: opt(int({ min: 0 })),
    annotations: opt(ref("Annotations")),
    ...meta,
  }),
  EmbeddedResource: obj({ type: literal("resource"), resource: { anyOf: [ref("TextResourceContents"), ref("BlobResourceContents")] }, annotations: opt(ref("Annotations")), ...meta }),
  ContentBlock: { oneOf: [ref("TextContent"), ref("ImageContent"), ref("AudioContent"), ref("ResourceLink"), ref("EmbeddedResource")] },

  // ── Tools ──
  ToolSchema: obj(
    { type: literal("object"), properties: opt(record({ type: "object" })), required: opt(arr(str())) },
    { description: "A tool's inputSchema or outputSchema: a JSON Schema whose type is object." },
  ),
  ToolAnnotations: obj({
    title: opt(str()),
    readOnlyHint: opt(bool()),
    destructiveHint: opt(bool()),
    idempotentHint: opt(bool()),
    openWorldHint: opt(bool()),
  }),
  Tool: obj({
    name: str({ minLength: 1, maxLength: 128, pattern: "^[A-Za-z0-9_.-]+$" }),
    title: opt(str()),
    description: opt(str()),
    inputSchema: ref("ToolSchema"),
    outputSchema: opt(ref("ToolSchema")),
    annotations: opt(ref("ToolAnnotations")),
    ...meta,
  }),
  CallToolResultShape: obj(
    { content: arr(ref("ContentBlock")), structuredContent: opt({ type: "object" }), isError: opt(bool()), ...meta },
    { description: "What a tool call answers: content blocks for the model, the structured result its outputSchema describes, and isError when the tool failed." },
  ),

  // ── Resources ──
  Resource: obj({
    uri: str(),
    name: str(),
    title: opt(str()),
    description: opt(str()),
    mimeType: opt(str()),
    size: opt(int({ min: 0 })),
    annotations: opt(ref("Annotations")),
    ...meta,
  }),
  ResourceTemplate: obj({ uriTemplate: str(), name: str(), title: opt(str()), description: opt(str()), mimeType: opt(str()), annotations: opt(ref("Annotations")), ...meta }),
  TextResourceContents: obj({ uri: str(), mimeType: opt(str()), text: str(), ...meta }),
  BlobResourceContents: obj({ uri: str(), mimeType: opt(str()), blob: str(), ...meta }),

  // ── Elicitation (form mode) ──
  ElicitationSchema: obj(
    { type: literal("object"), properties: record(ref("PrimitiveSchemaDefinition")), required: opt(arr(str())) },
    { description: "A flat form: each property a string, number, boolean or enumeration." },
  ),
  PrimitiveSchemaDefinition: {
    anyOf: [ref("StringSchema"), ref("NumberSchema"), ref("BooleanSchema"), ref("UntitledSingleSelectEnumSchema"), ref("TitledSingleSelectEnumSchema")],
  },
  StringSchema: obj({
    type: literal("string"),
    title: opt(str()),
    description: opt(str()),
    minLength: opt(int({ min: 0 })),
    maxLength: opt(int({ min: 0 })),
    format: opt(oneOfStrings(["email", "uri", "date", "date-time"])),
    default: opt(str()),
  }),
  NumberSchema: obj({ type: oneOfStrings(["number", "integer"]), title: opt(str()), description: opt(str()), minimum: opt(num()), maximum: opt(num()), default: opt(num()) }),
  BooleanSchema: obj({ type: literal("boolean"), title: opt(str()), description: opt(str()), default: opt(bool()) }),
  UntitledSingleSelectEnumSchema: obj({ type: literal("string"), title: opt(str()), description: opt(str()), enum: arr(str()), default: opt(str()) }),
  TitledSingleSelectEnumSchema: obj({
    type: literal("string"),
    title: opt(str()),
    description: opt(str()),
    oneOf: arr(obj({ const: str(), title: str() })),
    default: opt(str()),
  }),
  ElicitAction: oneOfStrings(["accept", "decline", "cancel"]),
  ElicitContentValue: { anyOf: [str(), num(), bool(), arr(str())] },

  // ── Logging ──
  LoggingLevel: oneOfStrings([...LOGGING_LEVELS]),
};
