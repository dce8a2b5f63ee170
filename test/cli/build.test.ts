import { expect } from 'chai';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { build, type BuildStep } from '../../src/cli/build.js';
import { inputsDigest, readStamp, staleReason } from '../../src/cli/build-inputs.js';

/** A step run as `node -e <code>` in the project root. */
const step = (name: string, code: string): BuildStep => ({ name, args: ['-e', code] });

/** Stand-ins for tsc and the UI build: each writes its outputs and counts its runs in runs.log. */
const STEPS = [
  step('tsc', "const fs=require('fs');fs.mkdirSync('dist/src',{recursive:true});fs.writeFileSync('dist/src/main.js','');fs.appendFileSync('runs.log','tsc\\n')"),
  step('ui', "const fs=require('fs');fs.mkdirSync('dist/ui',{recursive:true});fs.writeFileSync('dist/ui/manifest.json','{}');fs.appendFileSync('runs.log','ui\\n')"),
];

describe('src/cli/build.ts (npm run build; npm start builds only when stale)', () => {
  let root: string;
  const said: string[] = [];
  const say = (line: string): void => void said.push(line);
  const runs = (): string[] => (existsSync(join(root, 'runs.log')) ? readFileSync(join(root, 'runs.log'), 'utf8').trim().split('\n') : []);

  beforeEach(() => {
    root = mkdtempSync(join(tmpdir(), 'svc-build-'));
    mkdirSync(join(root, 'src'));
    writeFileSync(join(root, 'src/main.ts'), 'export {};\n');
    writeFileSync(join(root, 'package-lock.json'), '{}\n');
    said.length = 0;
  });
  afterEach(() => rmSync(root, { recursive: true, force: true }));

  it('a fresh clone (no dist/) is built, step by step, and stamped; the next start builds nothing', () => {
    const first = build(root, { ifStale: true, steps: STEPS, say });
    expect(first).to.include({ built: true, code: 0 });
    expect(runs()).to.deep.equal(['tsc', 'ui']);
    expect(said[0]).to.equal('dist/ is missing: building');
    expect(readStamp(root)!.inputs_sha256).to.equal(inputsDigest(root));
    const second = build(root, { ifStale: true, steps: STEPS, say });
    expect(second).to.include({ built: false, code: 0 });
    expect(runs()).to.deep.equal(['tsc', 'ui']);
    expect(said.at(-1)).to.match(/^dist\/ is current \(2 inputs, sha256 [0-9a-f]{12}, checked in \d+ ms\): not rebuilding$/);
  });

  it('an edited source is built again; npm run build (no --if-stale) builds even when current', () => {
    build(root, { ifStale: true, steps: STEPS, say });
    writeFileSync(join(root, 'src/main.ts'), 'export const changed = true;\n');
    expect(build(root, { ifStale: true, steps: STEPS, say }).built).to.equal(true);
    expect(said.at(-2)).to.equal('sources changed since the last build: building');
    expect(build(root, { ifStale: false, steps: STEPS, say }).built).to.equal(true);
    expect(runs()).to.have.length(6);
  });

  it('a failing step leaves no stamp and its exit code, so the next start tries again', () => {
    build(root, { ifStale: true, steps: STEPS, say });
    writeFileSync(join(root, 'src/main.ts'), 'export const broken = ;\n');
    const failed = build(root, { ifStale: true, steps: [step('tsc', 'process.exit(2)'), STEPS[1]!], say });
    expect(failed).to.include({ built: false, code: 2 });
    expect(said.at(-1)).to.equal('tsc failed (exit 2); dist/ is not marked current');
    expect(readStamp(root)).to.equal(null);
    expect(runs()).to.deep.equal(['tsc', 'ui']);
    expect(build(root, { ifStale: true, steps: STEPS, say }).built).to.equal(true);
  });

  it('a source saved while the build runs leaves dist/ stale: the stamp holds the inputs the build started from', () => {
    const saveDuringBuild = step('edit', "require('fs').writeFileSync('src/main.ts','export const saved = 1;\\n')");
    expect(build(root, { ifStale: true, steps: [STEPS[0]!, saveDuringBuild, STEPS[1]!], say }).built).to.equal(true);
    expect(staleReason(root)).to.equal('sources changed since the last build');
  });

  it('the command line takes --if-stale and nothing else (exit 2, usage)', () => {
    const run = spawnSync(process.execPath, ['--import', 'tsx', 'src/cli/build.ts', '--fast'], { encoding: 'utf8' });
    expect(run.status).to.equal(2);
    expect(run.stderr).to.match(/^build: Unknown option '--fast'/);
    expect(run.stderr).to.include('usage: node --import tsx src/cli/build.ts [--if-stale]');
  });
});
