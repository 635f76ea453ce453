import type { MethodEntry } from "../model.js";
import { serverRequest } from "../request-entries.js";
import { any, arr, bool, describe, int, nullable, obj, opt, record, ref, str, type Schema } from "../schema.js";

/** Server → client requests: approvals of the gateway's command tools, questions of ask_user, calls of the client's dynamic tools. */


export const codexServerRequestEntries: MethodEntry[] = [
  serverRequest(
    "item/commandExecution/requestApproval",
    "Ask the client to approve a command (one of the gateway's command tools) before it runs; the commandExecution item has started.",
    obj({
      threadId: str(),
      turnId: str(),
      itemId: str({ description: "The commandExecution item waiting for the decision." }),
      startedAtMs: describe("Unix milliseconds.", int({ min: 0 })),
      command: opt(nullable(str())),
      cwd: opt(nullable(str())),
      commandActions: opt(nullable(arr(ref("CommandAction")))),
      reason: opt(nullable(str())),
      approvalId: opt(nullable(str())),
      availableDecisions: opt(describe("The decisions the client may answer with.", nullable(arr(ref("CommandExecutionApprovalDecision"))))),
    }),
    obj({ decision: ref("CommandExecutionApprovalDecision") }),
  ),
  serverRequest(
    "item/tool/requestUserInput",
    "Ask the user the agent's question (the gateway's ask_user tool). Experimental: sent only to connections that set capabilities.experimentalApi.",
    obj({
      threadId: str(),
      turnId: str(),
      itemId: str(),
      isBlocking: bool(),
      questions: arr(ref("ToolRequestUserInputQuestion")),
      autoResolutionMs: opt(nullable(int({ min: 0 }))),
    }),
    obj({ answers: describe("Answers by question id.", record(ref("ToolRequestUserInputAnswer"))) }),
  ),
  serverRequest(
    "item/tool/call",
    "Call one of the client's dynamic tools (registered with thread/start dynamicTools) for the agent.",
    obj({ threadId: str(), turnId: str(), callId: str(), tool: str(), arguments: any("The tool's arguments."), namespace: opt(nullable(str())) }),
    obj({ contentItems: arr(ref("DynamicToolCallOutputContentItem")), success: bool() }),
  ),
];
