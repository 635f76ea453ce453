import type { ContentBlock } from "../../generated/acp-v1.js";
import { invalidParams } from "./errors.js";

/**
 * An ACP prompt as the text of Tau's `session.submit`, which takes text only: text blocks as they
 * are, resource links as Markdown links, embedded text resources inline in a `<context>` element
 * naming their URI. Images, audio and binary resources cannot reach Tau, so a prompt carrying one
 * is refused (-32602 naming the block) rather than silently stripped; initialize advertises no
 * image or audio support, so clients do not send them.
 */
export function promptText(prompt: ContentBlock[]): string {
  const parts = prompt.map((block, index) => {
    const at = `prompt.${index}`;
    switch (block.type) {
      case "text":
        return block.text;
      case "resource_link":
        return `[${block.title ?? block.name}](${block.uri})`;
      case "resource": {
        const { resource } = block;
        if (!("text" in resource) || typeof resource.text !== "string") {
          throw invalidParams(`${at}.resource`, "binary resources are not supported: Tau takes text only");
        }
        return `\n<context ref="${resource.uri}">\n${resource.text}\n</context>\n`;
      }
      case "image":
      case "audio":
        throw invalidParams(`${at}.type`, `${block.type} content is not supported: Tau's session.submit takes text only`);
      default:
        throw invalidParams(`${at}.type`, "unknown content block type");
    }
  });
  const text = parts.join("");
  if (text.trim() === "") throw invalidParams("prompt", "no text to send: Tau needs a non-empty message");
  return text;
}
