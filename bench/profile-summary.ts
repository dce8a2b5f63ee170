/**
 * A V8 .cpuprofile summarised: idle, GC and the functions with the most self time, over a window.
 * Used by bench/profile.ts; on its own it reads a saved profile:
 *   node --import tsx bench/profile-summary.ts FILE.cpuprofile [fromMs toMs [top]]
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

export interface Node {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}
export interface Profile {
  nodes: Node[];
  samples: number[];
  timeDeltas: number[];
}

/**
 * Self time per function (name + file:line) over the samples between `fromMs` and `toMs` after the
 * profile started (the load window: start-up and warm-up left out), and the shares of idle, GC and
 * the rest; `requests` gives the main thread's busy time per request.
 */
export function summarise(profile: Profile, fromMs: number, toMs: number, requests: number, top = 25): string {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const self = new Map<number, number>();
  let t = 0;
  for (let i = 0; i < profile.samples.length; i++) {
    t += profile.timeDeltas[i] ?? 0;
    if (t < fromMs * 1000 || t > toMs * 1000) continue;
    self.set(profile.samples[i]!, (self.get(profile.samples[i]!) ?? 0) + (profile.timeDeltas[i] ?? 0));
  }
  const total = [...self.values()].reduce((a, b) => a + b, 0);
  const byFn = new Map<string, number>();
  let idle = 0;
  let gc = 0;
  for (const [id, us] of self) {
    const { functionName, url, lineNumber } = byId.get(id)!.callFrame;
    if (functionName === '(idle)') idle += us;
    if (functionName === '(garbage collector)') gc += us;
    const file = url.replace(/^.*\/(node_modules\/)/, '$1').replace(/^.*\/(dist|bench)\//, '').replace(/^node:/, '');
    const key = `${functionName || '(anonymous)'} ${file ? `${file}:${lineNumber + 1}` : ''}`.trim();
    byFn.set(key, (byFn.get(key) ?? 0) + us);
  }
  const busy = total - idle;
  const pct = (us: number, of: number): string => `${((100 * us) / Math.max(of, 1)).toFixed(1)} %`;
  const lines = [
    `main thread over the window: ${(total / 1e6).toFixed(1)} s sampled, idle ${pct(idle, total)}, GC ${pct(gc, busy)} of busy time; ${requests > 0 ? `busy (wall) ${(busy / requests).toFixed(1)} µs per request` : ''}`,
    `${'self % of busy'.padStart(15)}  function`,
  ];
  for (const [fn, us] of [...byFn].filter(([fn]) => !fn.startsWith('(idle)')).sort((a, b) => b[1] - a[1]).slice(0, top)) lines.push(`${pct(us, busy).padStart(15)}  ${fn}`);
  return lines.join('\n');
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const [file, from = '0', to = '1e12', top = '25'] = process.argv.slice(2);
  if (!file) throw new Error('usage: bench/profile-summary.ts FILE.cpuprofile [fromMs toMs [top]]');
  console.log(summarise(JSON.parse(readFileSync(file, 'utf8')) as Profile, Number(from), Number(to), 0, Number(top)));
}
