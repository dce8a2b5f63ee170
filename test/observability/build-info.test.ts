import { expect } from 'chai';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { projectRoot } from '../../src/config/load.js';
import { envCommit, gitCommit, readBuildInfo } from '../../src/observability/build-info.js';

describe('build info (svc_build_info labels)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'svc-build-info-'));
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: 'x', version: '9.8.7' }));
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('a checkout gives its HEAD; a folder inside it or outside any repository gives none', () => {
    const root = projectRoot();
    let head: string | null = null;
    try {
      head = execFileSync('git', ['rev-parse', 'HEAD'], { cwd: root, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
    } catch {
      // no git, or not a checkout: the service reads no commit either
    }
    expect(gitCommit(root)).to.equal(head);
    // the project is not the repository when it only sits inside one (src/ is not a checkout root)
    expect(gitCommit(join(root, 'src'))).to.equal(null);
    expect(gitCommit(dir)).to.equal(null);
  });

  it('SOURCE_COMMIT counts only as a hex object name', () => {
    expect(envCommit({ SOURCE_COMMIT: ' ABCDEF0123 ' })).to.equal('abcdef0123');
    expect(envCommit({ SOURCE_COMMIT: 'a'.repeat(64) })).to.equal('a'.repeat(64));
    for (const bad of ['abc12', 'main', 'deadbeef; rm -rf /', 'g'.repeat(40), '']) expect(envCommit({ SOURCE_COMMIT: bad }), bad).to.equal(null);
    expect(envCommit({})).to.equal(null);
  });

  it('without git the start goes on: the variable, else unknown', () => {
    const path = process.env.PATH;
    process.env.PATH = dir; // no git binary to be found
    try {
      expect(gitCommit(projectRoot())).to.equal(null);
      expect(readBuildInfo(dir, { SOURCE_COMMIT: '0123456789abcdef0123456789abcdef01234567' })).to.deep.equal({ version: '9.8.7', commit: '0123456789abcdef0123456789abcdef01234567', node: process.version });
      expect(readBuildInfo(dir, {}).commit).to.equal('unknown');
    } finally {
      process.env.PATH = path;
    }
  });
});
