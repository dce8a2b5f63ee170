/**
 * `npm run kernels:table`: runs every registered kernel in-process (no pool) at its defaults and
 * at its declared worst case, and rewrites the kernel table in README.md between the markers.
 * Times are medians of repeated warm runs on this machine; they are what the bounds were set by.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { projectRoot } from '../src/config/load.js';
import { described, ruleLimit } from '../src/http/schema-walk.js';
import { KERNELS } from '../workers/registry.js';
import { kernelParamsSchema, kernelPath, orderParams, type KernelDef } from '../workers/kernel-def.js';
import { runKernelTask } from '../workers/run-kernel.js';

function paramDoc(def: KernelDef): string {
  const parts = Object.entries(def.params).map(([name, schema]) => {
    const d = described(schema);
    const min = ruleLimit(d, 'min');
    const max = ruleLimit(d, 'max');
    const type = d.type === 'qnum' ? 'num' : d.type === 'qint' ? 'int' : d.type === 'qbool' ? 'bool' : (d.type ?? '?');
    const range = min !== undefined || max !== undefined ? ` ${min ?? ''}…${max ?? ''}` : '';
    const dflt = d.flags?.default !== undefined ? ` (${JSON.stringify(d.flags.default)})` : '';
    return `\`${name}\` ${type}${range}${dflt}`;
  });
  return parts.length ? parts.join(', ') : '—';
}

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

const rows = KERNELS.map((def) => {
  const worst = def.input === 'query' ? Object.fromEntries(Object.entries(def.worstCase).map(([k, v]) => [k, String(v)])) : def.worstCase;
  const d = timeMs(def, {}, 5);
  const w = timeMs(def, worst, 3);
  process.stderr.write(`${def.id}: ${d.toFixed(2)} / ${w.toFixed(1)} ms\n`);
  const path = kernelPath(def);
  const how = def.input === 'request' ? ' (keys of the JSON `request`)' : '';
  return `| \`${path}\` | ${def.summary} (${def.references.join(', ')}) | ${paramDoc(def)}${how} | ${d.toFixed(2)} | ${w.toFixed(1)} |`;
});

const table = [
  '| route | what it computes (references) | parameters: type min…max (default); all also take `seed` 0…4294967295 (42) | ms at defaults | ms at worst case |',
  '|---|---|---|---|---|',
  ...rows,
].join('\n');

const readme = join(projectRoot(), 'README.md');
const text = readFileSync(readme, 'utf8');
const start = '<!-- kernels:start -->';
const end = '<!-- kernels:end -->';
const a = text.indexOf(start);
const b = text.indexOf(end);
if (a < 0 || b < 0) throw new Error('README.md has no kernel table markers');
writeFileSync(readme, `${text.slice(0, a + start.length)}\n${table}\n${text.slice(b)}`);
console.log(`kernel table: ${rows.length} kernels written to README.md`);
