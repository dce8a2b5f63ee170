/**
 * A local run: the Koa and node:http baselines and the built service started here, the chosen
 * scenarios against them (every ratio against a baseline measured in the same run), then the
 * in-process ones and those that start services of their own.
 */
import { scenarioInfo } from './catalogue.js';
import { SCENARIOS } from './scenarios.js';
import { printTable, startKoaHello, startServer, startService, type Server, type Summary } from './lib.js';
import { signingBench } from './signing.js';
import { admissionBench } from './admission.js';
import { describeSse, sseBench } from './sse.js';
import { ledgerBench } from './ledger.js';
import { ledgerMemory } from './ledger-memory.js';
import { ledgerScaleBench } from './ledger-scale.js';
import { warmupBench } from './warmup.js';
import { servicePool } from './pool-baseline.js';

export async function runLocal(chosen: readonly string[], scenarios: Record<string, unknown>): Promise<void> {
  const wanted = (name: string): boolean => chosen.includes(name);
  const served = SCENARIOS.filter((s) => wanted(s.name));
  if (served.length || wanted('sse')) {
    // its /pool route runs kernels on a pool of the service's size and thread priority
    const pool = servicePool();
    const koa = await startKoaHello('koa-hello', pool);
    const bare = await startServer('http-hello', ['--import', 'tsx', 'bench/servers/http-hello.ts'], '/');
    // the service runs from the compiled build, as in production
    // in its own data directory (file mode is the default): never the checkout's ./data
    const svc: Server = await startService('service');
    try {
      for (const scenario of served) {
        const rows: (Summary & { ratio?: number; vs?: string })[] = await scenario.run({ koa, bare, svc });
        printTable(`${scenario.name}: ${scenarioInfo(scenario.name).title}`, rows);
        scenarios[scenario.name] = rows;
      }
      if (wanted('sse')) {
        const r = await sseBench(svc);
        console.log(`\n## sse: ${r.viewers} viewers on one stream (generator in this process)`);
        console.log(describeSse(r));
        scenarios.sse = r;
      }
    } finally {
      await Promise.all([koa.stop(), bare.stop(), svc.stop()]);
    }
  }
  if (wanted('ledger')) scenarios.ledger = await ledgerBench();
  if (wanted('ledger-memory')) {
    const r = ledgerMemory();
    console.log(`\n## ledger-memory: ${r.nodes} nodes appended in memory mode, ${r.bytesPerNode.toFixed(0)} bytes per node (heap + array buffers after GC${r.gc ? '' : '; run without --expose-gc, figures include garbage'})`);
    scenarios['ledger-memory'] = r;
  }
  if (wanted('ledger-scale')) scenarios['ledger-scale'] = await ledgerScaleBench();
  if (wanted('warmup')) {
    const r = await warmupBench();
    console.log('\n## warmup: start-up to ready, and the first call of each kernel in a fresh thread against its warm calls');
    for (const s of r.startup) console.log(`pool.warmup=${s.warmup}: spawn to /health 200 ${s.spawnToHealthyMs.toFixed(0)} ms; process start to ready ${s.startupMs ?? '?'} ms; warm-up per thread ${JSON.stringify(s.warmMs)} ms`);
    for (const f of r.firstCalls) {
      const mode = `pool.warmup=${f.warmup}${f.warmup ? ` (${f.warmupPasses} passes)` : ''}`;
      console.log(`${mode}: the pass of first calls took ${f.firstPassCpuRatio?.toFixed(2) ?? '?'}x the thread CPU of a steady pass (per pass: ${JSON.stringify(f.passCpuMs?.map((ms) => Math.round(ms)))} ms; median of ${f.rounds} fresh threads)`);
      console.log(`${mode}: per kernel, wall time first/warm median ${f.medianRatio.toFixed(2)}x, worst ${f.worstRatio.toFixed(2)}x, ${f.over1_2} of ${f.kernels} over 1.2x`);
      for (const k of f.worst) console.log(`  ${k.id.padEnd(28)} first ${k.firstMs.toFixed(2)} ms, warm ${k.warmMs.toFixed(2)} ms, ${k.ratio.toFixed(2)}x`);
      if (f.cpu) {
        console.log(`${mode}: per kernel, thread CPU first/warm median ${f.cpu.medianRatio.toFixed(2)}x, worst ${f.cpu.worstRatio.toFixed(2)}x, ${f.cpu.over1_2} of ${f.kernels} over 1.2x; the call of pass ${f.cpu.spread.pass} against the same warm calls, median ${f.cpu.spread.medianRatio.toFixed(2)}x, ${f.cpu.spread.over1_2} of ${f.kernels} over 1.2x`);
        for (const k of f.cpu.worst) console.log(`  ${k.id.padEnd(28)} first ${k.firstCpuMs.toFixed(2)} ms, warm ${k.warmCpuMs.toFixed(2)} ms of CPU, ${k.ratio.toFixed(2)}x`);
      }
    }
    scenarios.warmup = r;
  }
  if (wanted('admission')) {
    const r = await admissionBench();
    console.log(`\n## admission: spin tasks of 50-150 ms (wall clock) at 4x a 2-thread pool's capacity, in-process`);
    console.log(`${r.ratePerS}/s offered, capacity ${r.capacityPerS}/s: ${JSON.stringify(r.outcomes)}; kept ${r.kept.toFixed(2)}x capacity`);
    scenarios.admission = r;
  }
  if (wanted('signing')) {
    const rows = await signingBench();
    console.log('\n## signing: signatures per second, in-process, ratio to a plain crypto.sign loop');
    for (const r of rows) console.log(`${r.label.padEnd(52)}${r.sigsPerSec.toFixed(0).padStart(9)} sig/s  ${r.ratio.toFixed(2)}x`);
    scenarios.signing = rows;
  }
}
