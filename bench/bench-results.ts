import type { MachineInfo } from "./machine.js";
import type { CodexPeerResult } from "./codex-peer.js";
import type { MemoryResult } from "./memory.js";
import type { PatternValidationResult } from "./patterns.js";
import type { HostileResult } from "./hostile.js";
import type { FanOutResult } from "./fan-out.js";
import type { ReplicaResult } from "./replicas.js";
import type { SessionScaleResult } from "./sessions.js";
import type { RoundTripResult } from "./round-trip.js";
import type { SendRoundResult } from "./send-round.js";
import type { StartupResult } from "./startup.js";
import type { StreamingSummary } from "./streaming.js";
import type { TranslationResult } from "./translation.js";
import type { ValidationBenchResult } from "./validation.js";

/** Everything one run measured (written as JSON to bench/results/). */
export interface BenchResults {
  startedAt: string;
  durationSeconds: number;
  machine: MachineInfo;
  nginx: string | null;
  notes: string[];
  settings: Record<string, number>;
  roundTrip: RoundTripResult[];
  streaming: StreamingSummary[];
  translation: TranslationResult[];
  /** 3 replicas on Redis against 1 in memory (absent in older results, empty without redis-server). */
  replicas?: ReplicaResult[];
  /** The real codex app-server and the gateway's, over stdio (absent in older results, empty without codex). */
  codexPeer?: CodexPeerResult[];
  /** Absent in results written before the row existed. */
  sendRound?: SendRoundResult[];
  /** Absent when --only left it out. */
  validation?: ValidationBenchResult;
  patterns: PatternValidationResult[];
  /** The worst event-loop stall under each hostile input (absent in older results and when --only left it out). */
  hostile?: HostileResult[];
  memory: MemoryResult[];
  /** Idle sessions and attached clients at 10, 100 and 1,000 sessions, beside the Node.js relay (absent in older results and when --only left it out). */
  sessions?: SessionScaleResult[];
  /** One session's turn to 1–500 subscribers, beside the Node.js relay (absent in older results and when --only left it out). */
  fanOut?: FanOutResult[];
  /** Absent when --only left it out. */
  startup?: StartupResult;
  ratios: Record<string, number | null>;
}
