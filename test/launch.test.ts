import { expect } from 'chai';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { allocatorAdvice } from '../src/platform/allocator.js';

// glibc reads MALLOC_TOP_PAD_ when the process starts, so only the launchers can set it (README,
// "Run it"): without it a kernel that allocates megabytes per call faults them in on every call
// in a worker thread. 4 MiB was measured not to be enough, 16 MiB enough.
describe('launchers (npm start, Procfile)', () => {
  const pkg = JSON.parse(readFileSync('package.json', 'utf8')) as { config: Record<string, string>; scripts: Record<string, string> & { start: string } };
  const pad = pkg.config.malloc_top_pad!;
  const MAIN = 'node dist/src/main.js';

  it('npm start runs the built entry with MALLOC_TOP_PAD_ from package.json config, of at least 16 MiB', () => {
    expect(Number(pad)).to.be.at.least(16 * 2 ** 20);
    expect(pkg.scripts.start).to.equal(`MALLOC_TOP_PAD_=$npm_package_config_malloc_top_pad ${MAIN}`);
    // what npm's shell makes of it: the variable reaches the node process
    const prefix = pkg.scripts.start.slice(0, -MAIN.length);
    const seen = execFileSync('sh', ['-c', `${prefix}node -p process.env.MALLOC_TOP_PAD_`], { env: { ...process.env, npm_package_config_malloc_top_pad: pad }, encoding: 'utf8' });
    expect(seen.trim()).to.equal(pad);
  });

  it('the Procfile, npm run dev, the benches and the start-up warning name the same value', () => {
    expect(readFileSync('Procfile', 'utf8')).to.equal(`web: MALLOC_TOP_PAD_=${pad} ${MAIN}\n`);
    expect(allocatorAdvice({ env: {}, glibc: '2.36' })).to.include(`launch with MALLOC_TOP_PAD_=${pad} as npm start`);
    for (const name of ['bench', 'bench:profile', 'bench:cost', 'bench:ab']) expect(pkg.scripts[name], name).to.include('MALLOC_TOP_PAD_=$npm_package_config_malloc_top_pad node ');
    expect(pkg.scripts.dev).to.equal('MALLOC_TOP_PAD_=$npm_package_config_malloc_top_pad tsx src/main.ts');
  });
});
