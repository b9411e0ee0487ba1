// What every cold-start child prints when its run has ended: times since the process started.
import { performance } from 'node:perf_hooks';

export function report(imported, text) {
  if (!text) throw new Error('cold start: the run produced no answer');
  const cpu = process.cpuUsage();
  console.log(JSON.stringify({ importedMs: imported, endMs: performance.now(), cpuMs: (cpu.user + cpu.system) / 1000 }));
}
