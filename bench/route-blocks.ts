/**
 * `npm run bench:blocks`: the longest main-thread block of the first and of a repeated call of
 * every GET route, on a fresh app at the test defaults (memory ledger, two threads; ADS-B off, so
 * nothing leaves the machine). A main-thread task over ~50 ms on any route holds up every other
 * request, a defect: this is how one is found. Time a kernel spends in the pool does not count, nor
 * the loop waiting for a CPU another process holds: only the main thread's own work, in CPU time
 * (test/helpers/loop-block.ts); the GC column is the longest collection pause meanwhile (wall
 * time).
 * POST routes are then sent bodies at the limits (bench/post-samples.ts), each held to
 * POST_BUDGET_MS of main-thread CPU (signing and kernels run in the pool and do not count).
 *   npm run bench:blocks                 # every GET route and every POST sample
 *   npm run bench:blocks -- posture      # routes whose path contains "posture"
 */
import { buildApp } from '../src/app.js';
import { loadConfig } from '../src/config/load.js';
import { routeSamples } from './route-samples.js';
import { POST_BUDGET_MS, POST_SAMPLES } from './post-samples.js';
import { loopBlockDuring } from '../test/helpers/loop-block.js';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

const filter = process.argv.slice(2);
const built = await buildApp(loadConfig({ env: { NODE_ENV: 'test' }, overrides: { adsb: { enabled: false } } }));
await built.services.pool.ready();
const handle = built.app.callback();
const server = createServer((req, res) => void handle(req, res));
await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
const rows: { target: string; status: number; firstMs: number; againMs: number; gcMs: number }[] = [];
const posts: { name: string; status: number; expected: number; ms: number; gcMs: number }[] = [];
try {
  const targets = await routeSamples(built.routes, base);
  for (const target of targets) {
    if (filter.length && !filter.some((f) => target.includes(f))) continue;
    let status = 0;
    const call = async (): Promise<void> => {
      const res = await fetch(base + target, { headers: { accept: 'application/json' }, signal: AbortSignal.timeout(15_000) });
      status = res.status;
      await res.arrayBuffer();
    };
    const first = await loopBlockDuring(call);
    const again = await loopBlockDuring(call);
    rows.push({ target, status, firstMs: first.blockMs, againMs: again.blockMs, gcMs: Math.max(first.gcMs, again.gcMs) });
  }
  for (const sample of POST_SAMPLES) {
    if (filter.length && !filter.some((f) => sample.path.includes(f) || sample.name.includes(f))) continue;
    let status = 0;
    const call = async (): Promise<void> => {
      const res = await fetch(base + sample.path, { method: 'POST', headers: { 'content-type': sample.contentType }, body: sample.body, signal: AbortSignal.timeout(15_000) });
      status = res.status;
      await res.arrayBuffer();
    };
    // the least of three: a POST's budget is its own work, not a collection another call left
    let best = { blockMs: Infinity, gcMs: 0 };
    for (let i = 0; i < 3; i++) {
      const r = await loopBlockDuring(call);
      if (r.blockMs < best.blockMs) best = r;
    }
    posts.push({ name: `POST ${sample.path}: ${sample.name}`, status, expected: sample.status, ms: best.blockMs, gcMs: best.gcMs });
  }
} finally {
  server.closeAllConnections();
  server.close();
  await built.close();
}
rows.sort((a, b) => Math.max(b.firstMs, b.againMs) - Math.max(a.firstMs, a.againMs));
console.log(`${'GET route (sample call)'.padEnd(72)}${'status'.padStart(7)}${'first ms'.padStart(10)}${'again ms'.padStart(10)}${'GC ms'.padStart(8)}`);
for (const r of rows) {
  const flag = Math.max(r.firstMs, r.againMs) > 50 ? '  <-- over 50 ms' : '';
  console.log(`${r.target.slice(0, 71).padEnd(72)}${String(r.status).padStart(7)}${r.firstMs.toFixed(1).padStart(10)}${r.againMs.toFixed(1).padStart(10)}${r.gcMs.toFixed(1).padStart(8)}${flag}`);
}
console.log(`\n${'POST route, body at the limits'.padEnd(72)}${'status'.padStart(7)}${'block ms'.padStart(10)}${'GC ms'.padStart(8)}`);
for (const p of posts) {
  const flags = [p.ms > POST_BUDGET_MS ? `over ${POST_BUDGET_MS} ms` : '', p.status !== p.expected ? `expected ${p.expected}` : ''].filter(Boolean).join(', ');
  console.log(`${p.name.slice(0, 71).padEnd(72)}${String(p.status).padStart(7)}${p.ms.toFixed(1).padStart(10)}${p.gcMs.toFixed(1).padStart(8)}${flags ? `  <-- ${flags}` : ''}`);
}
