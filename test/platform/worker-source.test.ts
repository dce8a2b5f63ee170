import { expect } from 'chai';
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Piscina } from 'piscina';
import { withoutTsLoader, workerSource } from '../../src/platform/worker-source.js';

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

  it('a compiled entry is loaded as it is, with the process options', () => {
    const entry = new URL('file:///srv/dist/workers/host.js');
    expect(workerSource(entry)).to.deep.equal({ filename: entry.href, execArgv: undefined });
  });

  it('a .ts entry becomes one strict CommonJS bundle, named by its content', () => {
    const a = workerSource(host);
    const b = workerSource(host);
    expect(a.filename).to.equal(b.filename);
    expect(a.filename).to.match(/\/svc-workers-\w+\/host-[0-9a-f]{16}\.cjs$/);
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
});
