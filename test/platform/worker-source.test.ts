import { expect } from 'chai';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Piscina } from 'piscina';
import { acceptedByWorkers, bundleWorker, withoutTsLoader, workerSource } from '../../src/platform/worker-source.js';

const host = new URL('../../workers/host.ts', import.meta.url);

describe('src/platform/worker-source', () => {
  it('drops the tsx loader in every spelling, and nothing else', () => {
    expect(withoutTsLoader(['--import', 'tsx', '--expose-gc'])).to.deep.equal(['--expose-gc']);
    expect(withoutTsLoader(['--import=tsx', '--max-old-space-size=512'])).to.deep.equal(['--max-old-space-size=512']);
    expect(withoutTsLoader(['--import', 'tsx/esm', '--require', 'tsx/cjs'])).to.deep.equal([]);
    // what the tsx CLI (`npm run dev`) puts in a process's options
    expect(withoutTsLoader(['--require', '/p/node_modules/tsx/dist/preflight.cjs', '--import', 'file:///p/node_modules/tsx/dist/loader.mjs', '--cpu-prof'])).to.deep.equal(['--cpu-prof']);
    expect(withoutTsLoader(['--import', './instrument.mjs', '--loader=tsx'])).to.deep.equal(['--import', './instrument.mjs']);
    expect(withoutTsLoader([])).to.deep.equal([]);
  });

  it('leaves out the options a thread refuses when given explicitly (bench runs node --expose-gc)', () => {
    expect(acceptedByWorkers(['--expose-gc'])).to.deep.equal([]);
    expect(acceptedByWorkers(['--title=svc', '--expose-gc', '--no-warnings', '--max-old-space-size=512'])).to.deep.equal(['--no-warnings']);
    expect(acceptedByWorkers(['--stack-size', '2000', '--enable-source-maps'])).to.deep.equal(['--enable-source-maps']);
    expect(acceptedByWorkers([])).to.deep.equal([]);
    // what is kept really starts a thread
    expect(acceptedByWorkers(['--enable-source-maps', '--no-warnings'])).to.deep.equal(['--enable-source-maps', '--no-warnings']);
  });

  it('a pool from sources starts in a process run with options threads refuse (as `npm run bench` runs)', () => {
    const script = [
      "import { Piscina } from 'piscina';",
      "import { workerSource } from './src/platform/worker-source.ts';",
      "const p = new Piscina({ ...workerSource(new URL('./workers/host.ts', 'file://' + process.cwd() + '/')), minThreads: 1, maxThreads: 1 });",
      "const r = await p.run({ kind: 'probe' }); await p.destroy(); process.stdout.write(JSON.stringify(r.ok));",
    ].join('\n');
    const r = spawnSync(process.execPath, ['--expose-gc', '--import', 'tsx', '--input-type=module', '-e', script], { encoding: 'utf8', cwd: fileURLToPath(new URL('../..', import.meta.url)) });
    expect(r.stderr).to.equal('');
    expect(r.stdout).to.equal('true');
  });

  it('a compiled entry is loaded as it is, with the process options', () => {
    const entry = new URL('file:///srv/dist/workers/host.js');
    expect(workerSource(entry)).to.deep.equal({ filename: entry.href, execArgv: undefined });
  });

  it('a .ts entry becomes one strict CommonJS bundle, named by its content', () => {
    const a = workerSource(host);
    const b = workerSource(host);
    expect(a.filename).to.equal(b.filename);
    expect(a.filename).to.match(/\/svc-workers-\w+\/host-[0-9a-f]{8}-[0-9a-f]{16}\.cjs$/);
    const text = readFileSync(fileURLToPath(a.filename), 'utf8');
    expect(text.startsWith('"use strict";')).to.equal(true);
    // the kernels and joi are inside: the file needs no node_modules beside it
    expect(text).to.include('workers/kernels/ssm-scan.ts');
    expect(text).to.not.match(/require\("joi"\)/);
    expect(a.execArgv!.join(' ')).to.not.match(/tsx/);
  });

  it('the bundle runs a kernel in a thread without tsx, and answers as the sources do', async () => {
    const src = workerSource(host);
    const pool = new Piscina({ filename: src.filename, execArgv: src.execArgv, minThreads: 1, maxThreads: 1 });
    try {
      const task = { kind: 'kernel', id: 'ssm/scan', params: { seed: 7, seq_len: 64, state_dim: 8 }, requestLabel: null };
      const viaBundle = (await pool.run(task)) as { ok: boolean; value: string };
      expect(viaBundle.ok).to.equal(true);
      const { default: handle } = await import('../../workers/host.js');
      const direct = handle(task as never) as { ok: boolean; value: string };
      expect(viaBundle.value).to.equal(direct.value);
    } finally {
      await pool.destroy();
    }
  });

  it('the bundle loads in plain node (no loader at all)', () => {
    const { filename } = workerSource(host);
    expect(existsSync(fileURLToPath(filename))).to.equal(true);
    const r = spawnSync(process.execPath, ['-e', `const m = require(${JSON.stringify(fileURLToPath(filename))}); process.stdout.write(typeof m.default)`], { encoding: 'utf8' });
    expect(r.stderr).to.equal('');
    expect(r.stdout).to.equal('function');
  });

  it('a later process reuses the bundle while its inputs are unchanged, and rebuilds when one changes', () => {
    const dir = mkdtempSync(join(tmpdir(), 'svc-worker-src-'));
    const made: string[] = [];
    try {
      writeFileSync(join(dir, 'entry.ts'), "import { v } from './dep.js';\nexport default function answer(): number { return v; }\n");
      writeFileSync(join(dir, 'dep.ts'), 'export const v: number = 1;\n');
      const first = bundleWorker(join(dir, 'entry.ts'));
      const index = join(tmpdir(), `svc-workers-${process.getuid?.() ?? 'user'}`, readdirIndex(first));
      const indexedAt = statSync(index).mtimeMs;
      // reused: the same file, and the index was not rewritten (a rebuild rewrites it)
      expect(bundleWorker(join(dir, 'entry.ts'))).to.equal(first);
      expect(statSync(index).mtimeMs).to.equal(indexedAt);
      // an edited import: a new bundle with the new value
      writeFileSync(join(dir, 'dep.ts'), 'export const v: number = 2;\n');
      const second = bundleWorker(join(dir, 'entry.ts'));
      expect(second).to.not.equal(first);
      const load = createRequire(import.meta.url);
      expect((load(first) as { default: () => number }).default()).to.equal(1);
      expect((load(second) as { default: () => number }).default()).to.equal(2);
      // a bundle a day old is removed by the next rebuild of its entry; a younger one is kept
      const dayOld = new Date(Date.now() - 86_400_000 - 60_000);
      utimesSync(first, dayOld, dayOld);
      writeFileSync(join(dir, 'dep.ts'), 'export const v: number = 3;\n');
      const third = bundleWorker(join(dir, 'entry.ts'));
      made.push(first, second, third, index);
      expect([existsSync(first), existsSync(second), existsSync(third)]).to.deep.equal([false, true, true]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
      for (const f of made) rmSync(f, { force: true });
    }
  });
});

/** entry-<8 hex>-<16 hex>.cjs -> entry-<8 hex>.inputs.json */
function readdirIndex(bundle: string): string {
  return bundle.split('/').pop()!.replace(/-[0-9a-f]{16}\.cjs$/, '.inputs.json');
}
