import type { ArtifactRecord, SessionArtifactGetParams, SessionArtifactGetResult, SessionArtifactsParams, SessionArtifactsResult } from "../../../generated/ask-v1.0.js";
import type { Snapshot } from "../../../generated/tau-v18.js";
import { invalidParams } from "../ask-errors.js";
import type { MethodContext } from "../context.js";
import { isoTime } from "./sessions.js";

interface Found {
  record: ArtifactRecord;
  content: string;
}

/**
 * Artifacts are what Tau's snapshot already holds: each tool result (its text) and each image
 * (in tool results and user messages). Ids are stable: the message id, plus `#<block>` for images.
 */
function collect(snapshot: Snapshot): Found[] {
  const found: Found[] = [];
  for (const { id, message } of snapshot.messages) {
    if (message.role !== "toolResult" && message.role !== "user") continue;
    const blocks = typeof message.content === "string" ? [{ type: "text" as const, text: message.content }] : message.content;
    const tool = message.role === "toolResult" ? { toolName: message.toolName, toolCallId: message.toolCallId } : {};
    if (message.role === "toolResult") {
      const text = blocks.flatMap((b) => (b.type === "text" ? [b.text] : [])).join("");
      found.push({
        record: { id, kind: "tool_result", filename: `${message.toolName}-${id}.txt`, mimeType: "text/plain", encoding: "utf8", size: Buffer.byteLength(text), createdAt: isoTime(message.timestamp), ...tool },
        content: text,
      });
    }
    blocks.forEach((block, index) => {
      if (block.type !== "image") return;
      const extension = block.mimeType.split("/")[1] ?? "bin";
      found.push({
        record: { id: `${id}#${index}`, kind: "image", filename: `${id}-${index}.${extension}`, mimeType: block.mimeType, encoding: "base64", size: Buffer.byteLength(block.data, "base64"), createdAt: isoTime(message.timestamp), ...tool },
        content: block.data,
      });
    });
  }
  return found;
}

export async function artifacts({ services, peer }: MethodContext, params: SessionArtifactsParams): Promise<SessionArtifactsResult> {
  const record = await services.sessions.access(params.sessionId, peer.tenant);
  return { artifacts: collect(record.hub.snapshot!).map((f) => f.record) };
}

export async function artifactGet({ services, peer }: MethodContext, params: SessionArtifactGetParams): Promise<SessionArtifactGetResult> {
  const record = await services.sessions.access(params.sessionId, peer.tenant);
  const found = collect(record.hub.snapshot!).find((f) => f.record.id === params.artifactId);
  if (!found) throw invalidParams("artifactId", `no artifact ${JSON.stringify(params.artifactId)} in session ${params.sessionId}`);
  return { artifact: { ...found.record, content: found.content } };
}
