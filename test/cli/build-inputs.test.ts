import { expect } from 'chai';
import { mkdirSync, mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { expectedOutputs, inputFiles, inputsDigest, readStamp, staleReason, STAMP_FILE, writeStamp } from '../../src/cli/build-inputs.js';

/** A project tree in miniature: compiled sources, browser code, a template, root files that count and one that does not. */
function tree(): string {
  const root = mkdtempSync(join(tmpdir(), 'svc-build-inputs-'));
  const files: Record<string, string> = {
    'src/main.ts': 'export {};\n',
    'src/ledger/ledger.ts': 'export const a = 1;\n',
    'src/types.d.ts': 'declare const x: number;\n',
    'src/ui/client/globe/main.ts': 'console.log(1);\n',
    'src/ui/pages/globe.html': '<html></html>\n',
    'src/security/posture-baseline.json': '{}\n',
    'workers/host.ts': 'export {};\n',
    'tsconfig.json': '{}\n',
    'tsconfig.build.json': '{}\n',
    'package.json': '{}\n',
    'package-lock.json': '{}\n',
    'README.md': '# readme\n',
    'test/main.test.ts': 'export {};\n',
  };
  for (const [f, text] of Object.entries(files)) put(root, f, text);
  return root;
}

function put(root: string, file: string, text: string): void {
  mkdirSync(dirname(join(root, file)), { recursive: true });
  writeFileSync(join(root, file), text);
}

/** What a successful build leaves, and its stamp. */
function built(root: string): void {
  for (const f of expectedOutputs(inputFiles(root))) put(root, f, '');
  writeStamp(root, inputsDigest(root), inputFiles(root).length, 1234);
}

describe('src/cli/build-inputs.ts (is dist/ current?)', () => {
  let root: string;
  beforeEach(() => (root = tree()));
  afterEach(() => rmSync(root, { recursive: true, force: true }));

  it('the inputs are every file under src/ and workers/ and the compiler and package files; tests and docs are not', () => {
    expect(inputFiles(root)).to.deep.equal([
      'package-lock.json',
      'package.json',
      'src/ledger/ledger.ts',
      'src/main.ts',
      'src/security/posture-baseline.json',
      'src/types.d.ts',
      'src/ui/client/globe/main.ts',
      'src/ui/pages/globe.html',
      'tsconfig.build.json',
      'tsconfig.json',
      'workers/host.ts',
    ]);
  });

  it('the outputs vouched for: a .js per compiled .ts (not the browser code, not declarations) and the UI manifest', () => {
    expect(expectedOutputs(inputFiles(root))).to.deep.equal(['dist/src/ledger/ledger.js', 'dist/src/main.js', 'dist/workers/host.js', 'dist/ui/manifest.json']);
  });

  it('missing dist/ or a missing stamp means a build; a finished one is current', () => {
    expect(staleReason(root)).to.equal('dist/ is missing');
    for (const f of expectedOutputs(inputFiles(root))) put(root, f, '');
    expect(staleReason(root)).to.match(/build-stamp\.json is missing/);
    built(root);
    expect(staleReason(root)).to.equal(null);
    expect(readStamp(root)).to.include({ schema: 'svc.build-stamp/v1', inputs_sha256: inputsDigest(root), inputs: 11, build_ms: 1234 });
  });

  it('any change to an input makes dist/ stale: an edit, a template, the lock file, a new file, a rename', () => {
    built(root);
    const edits: [string, () => void][] = [
      ['a server source', () => put(root, 'src/ledger/ledger.ts', 'export const a = 2;\n')],
      ['a browser source (the UI build)', () => put(root, 'src/ui/client/globe/main.ts', 'console.log(2);\n')],
      ['a page template', () => put(root, 'src/ui/pages/globe.html', '<html><body></body></html>\n')],
      ['package-lock.json', () => put(root, 'package-lock.json', '{"lockfileVersion":3}\n')],
      ['tsconfig.build.json', () => put(root, 'tsconfig.build.json', '{"compilerOptions":{}}\n')],
      ['a new worker', () => put(root, 'workers/extra.ts', 'export {};\n')],
      ['a rename', () => renameSync(join(root, 'src/ledger/ledger.ts'), join(root, 'src/ledger/log.ts'))],
    ];
    for (const [what, edit] of edits) {
      edit();
      expect(staleReason(root), what).to.equal('sources changed since the last build');
      built(root);
      expect(staleReason(root), `${what}, rebuilt`).to.equal(null);
    }
  });

  it('files that are no input (tests, README) leave it current; a removed output or UI manifest does not', () => {
    built(root);
    put(root, 'README.md', '# changed\n');
    put(root, 'test/main.test.ts', 'export const t = 1;\n');
    expect(staleReason(root)).to.equal(null);
    rmSync(join(root, 'dist/workers/host.js'));
    expect(staleReason(root)).to.equal('dist/workers/host.js is missing');
    built(root);
    rmSync(join(root, 'dist/ui'), { recursive: true });
    expect(staleReason(root)).to.equal('dist/ui/manifest.json is missing');
  });

  it('a stamp of another format counts as none', () => {
    built(root);
    put(root, STAMP_FILE, JSON.stringify({ inputs_sha256: inputsDigest(root) }));
    expect(readStamp(root)).to.equal(null);
    expect(staleReason(root)).to.match(/build-stamp\.json is missing/);
  });
});
