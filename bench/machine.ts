import { readFileSync } from "node:fs";
import { availableParallelism, loadavg, release, totalmem } from "node:os";

/** The machine a run happened on, as docs/performance.md and the JSON results report it. */
export interface MachineInfo {
  cpu: string;
  cores: number;
  memoryGiB: number;
  node: string;
  kernel: string;
  /** 1, 5 and 15 minute load averages when the run started: other work on the box skews every number. */
  loadAverage: number[];
}

/** Whether other work competed for the CPU when a run started (load above half the cores). */
export const wasBusy = (machine: MachineInfo): boolean => machine.loadAverage[0]! > machine.cores / 2;

/** The note a run gives when it started on a busy machine. */
export function busyMachineNote(machine: MachineInfo): string {
  return `1-minute load average ${machine.loadAverage[0]} on ${machine.cores} cores at the start: other work competed for the CPU, so rates are low and noisy; CPU per message is steadier`;
}

export function machineInfo(): MachineInfo {
  let cpu = "unknown";
  try {
    cpu = /^model name\s*:\s*(.+)$/m.exec(readFileSync("/proc/cpuinfo", "utf8"))?.[1]?.trim() ?? cpu;
  } catch {
    // not Linux: keep "unknown"
  }
  return {
    cpu,
    cores: availableParallelism(),
    memoryGiB: Math.round(totalmem() / 2 ** 30),
    node: process.version,
    kernel: `${process.platform} ${release()}`,
    loadAverage: loadavg().map((l) => Math.round(l * 100) / 100),
  };
}
