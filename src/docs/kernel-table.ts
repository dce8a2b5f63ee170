/**
 * The kernel table of docs/kernels.md, generated from the kernel registry: one row per kernel with its
 * route, summary, references and parameters (type, bounds, default), and the two measured times
 * `npm run kernels:table` writes (bench/kernel-costs.ts). The times are measurements, so only the
 * command writes them; everything else is a function of the registry, which a test holds the
 * committed table to.
 */
import { described, ruleLimit } from '../http/schema-walk.js';
import { kernelPath, type KernelDef } from '../../workers/kernel-def.js';
import { sectionIn, withSection, type Markers } from './generated-section.js';

/** The file that holds the table, from the project root. */
export const KERNEL_TABLE_FILE = 'docs/kernels.md';
export const KERNEL_TABLE_START = '<!-- kernels:start -->';
export const KERNEL_TABLE_END = '<!-- kernels:end -->';
const MARKERS: Markers = { start: KERNEL_TABLE_START, end: KERNEL_TABLE_END };
/** What rewrites the table: `--keep-times` keeps the times already in it and measures only kernels it lacks. */
export const KERNEL_TABLE_COMMAND = 'npm run kernels:table -- --keep-times';

/** Median milliseconds at the defaults and at the declared worst case, as the table prints them. */
export interface KernelTimes {
  defaults: string;
  worst: string;
}

const HEADER = [
  '| route | what it computes (references) | parameters: type min…max (default); all also take `seed` 0…4294967295 (42) | ms at defaults | ms at worst case |',
  '|---|---|---|---|---|',
];

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

/** The table for `kernels`, in their order; a kernel without times gets `—` in both time columns. */
export function kernelTable(kernels: readonly KernelDef[], times: ReadonlyMap<string, KernelTimes>): string {
  const rows = kernels.map((def) => {
    const how = def.input === 'request' ? ' (keys of the JSON `request`)' : '';
    const t = times.get(def.id) ?? { defaults: '—', worst: '—' };
    return `| \`${kernelPath(def)}\` | ${def.summary} (${def.references.join(', ')}) | ${paramDoc(def)}${how} | ${t.defaults} | ${t.worst} |`;
  });
  return [...HEADER, ...rows].join('\n');
}

/** The table between the markers of `text`, or null when it has no markers. */
export function tableIn(text: string): string | null {
  return sectionIn(text, MARKERS);
}

/** `text` with the table between its markers replaced. */
export function withTable(text: string, table: string): string {
  return withSection(text, MARKERS, table);
}

/** The times a committed table lists, by kernel id (its route without the leading slash). */
export function timesIn(table: string): Map<string, KernelTimes> {
  const out = new Map<string, KernelTimes>();
  for (const line of table.split('\n')) {
    const route = /^\| `\/([^`]+)` \|/.exec(line)?.[1];
    const cells = line.split(' | ');
    if (!route || cells.length < 5) continue;
    out.set(route, { defaults: cells[cells.length - 2]!, worst: cells[cells.length - 1]!.replace(/ \|$/, '') });
  }
  return out;
}
