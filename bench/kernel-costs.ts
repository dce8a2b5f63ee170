/**
 * `npm run kernels:table`: runs every registered kernel in-process (no pool) at its defaults and
 * at its declared worst case, and rewrites the kernel table in docs/kernels.md between the markers
 * (src/docs/kernel-table.ts generates it from the registry). Times are medians of repeated warm
 * runs on this machine; they are what the bounds were set by. `-- --keep-times` keeps the times the
 * table already lists and measures only the kernels it lacks (after a change to the text alone).
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { projectRoot } from '../src/config/load.js';
import { KERNEL_TABLE_FILE, kernelTable, tableIn, timesIn, withTable, type KernelTimes } from '../src/docs/kernel-table.js';
import { KERNELS } from '../workers/registry.js';
import { kernelParamsSchema, orderParams, type KernelDef } from '../workers/kernel-def.js';
import { runKernelTask } from '../workers/run-kernel.js';

function timeMs(def: KernelDef, query: Record<string, unknown>, runs: number): number {
  const { value } = kernelParamsSchema(def).validate(query);
  const params = orderParams(def, value as Record<string, unknown>);
  const times: number[] = [];
  for (let i = 0; i < runs + 1; i++) {
    const t0 = performance.now();
    const res = runKernelTask({ kind: 'kernel', id: def.id, params });
    if (!res.ok) throw new Error(`${def.id}: ${res.error.msg}`);
    if (i > 0) times.push(performance.now() - t0); // first run warms the JIT
  }
  times.sort((a, b) => a - b);
  return times[Math.floor(times.length / 2)]!;
}

function measure(def: KernelDef): KernelTimes {
  const worst = def.input === 'query' ? Object.fromEntries(Object.entries(def.worstCase).map(([k, v]) => [k, String(v)])) : def.worstCase;
  const d = timeMs(def, {}, 5);
  const w = timeMs(def, worst, 3);
  process.stderr.write(`${def.id}: ${d.toFixed(2)} / ${w.toFixed(1)} ms\n`);
  return { defaults: d.toFixed(2), worst: w.toFixed(1) };
}

const file = join(projectRoot(), KERNEL_TABLE_FILE);
const text = readFileSync(file, 'utf8');
const kept = process.argv.includes('--keep-times') ? timesIn(tableIn(text) ?? '') : new Map<string, KernelTimes>();
const times = new Map(KERNELS.map((def) => [def.id, kept.get(def.id) ?? measure(def)]));
writeFileSync(file, withTable(text, kernelTable(KERNELS, times)));
console.log(`kernel table: ${KERNELS.length} kernels written to ${KERNEL_TABLE_FILE} (${KERNELS.length - KERNELS.filter((d) => kept.has(d.id)).length} measured)`);
