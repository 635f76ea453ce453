import { opt, type Schema } from "../schema.js";
import { acpObj, closedStrings, orNull, ref, refOrNull, string, tagged } from "./shapes.js";

/**
 * Content blocks (protocol §6): what prompts carry and what message chunks and tool calls show.
 * An agent must accept text and resource links; images, audio and embedded resources only travel
 * under the matching prompt capability.
 */

const annotations = { annotations: opt(refOrNull("Annotations")) };

export const contentDefinitions: Record<string, Schema> = {
  ContentBlock: {
    oneOf: [
      tagged("type", "text", "TextContent"),
      tagged("type", "image", "ImageContent"),
      tagged("type", "audio", "AudioContent"),
      tagged("type", "resource_link", "ResourceLink"),
      tagged("type", "resource", "EmbeddedResource"),
    ],
  },
  TextContent: acpObj({ ...annotations, text: string() }),
  ImageContent: acpObj({ ...annotations, data: string(), mimeType: string(), uri: opt(orNull("string")) }),
  AudioContent: acpObj({ ...annotations, data: string(), mimeType: string() }),
  ResourceLink: acpObj({
    ...annotations,
    description: opt(orNull("string")),
    mimeType: opt(orNull("string")),
    name: string(),
    size: opt(orNull("integer")),
    title: opt(orNull("string")),
    uri: string(),
  }),
  EmbeddedResource: acpObj({ ...annotations, resource: ref("EmbeddedResourceResource") }),
  EmbeddedResourceResource: { anyOf: [ref("TextResourceContents"), ref("BlobResourceContents")] },
  TextResourceContents: acpObj({ mimeType: opt(orNull("string")), text: string(), uri: string() }),
  BlobResourceContents: acpObj({ blob: string(), mimeType: opt(orNull("string")), uri: string() }),
  Annotations: acpObj({
    audience: opt(orNull("array", { items: ref("Role") })),
    lastModified: opt(orNull("string")),
    priority: opt(orNull("number")),
  }),
  Role: closedStrings("assistant", "user"),
};

