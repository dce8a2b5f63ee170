import { expect } from 'chai';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { projectRoot } from '../../src/config/load.js';

// A commit subject is what `git log --oneline` and every review tool show: it says what changed in
// one line a terminal does not wrap, and the detail goes in the body. The rule holds from BASE on;
// older subjects stay as history wrote them.
const BASE = 'c8bb601';
const LIMIT = 72;

function git(cwd: string, args: readonly string[]): string {
  return execFileSync('git', args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
}

/** Subjects after `base` longer than LIMIT characters (code points), as "hash (length) subject". */
export function longSubjects(cwd: string, base: string): string[] {
  let inside = '';
  try {
    inside = git(cwd, ['rev-parse', '--is-inside-work-tree']).trim();
  } catch {
    // the error below says what to do
  }
  if (inside !== 'true') throw new Error(`${cwd} is not a git checkout: the commit-subject check reads git log, so run the tests in a clone of the repository`);
  try {
    git(cwd, ['cat-file', '-e', `${base}^{commit}`]);
  } catch {
    throw new Error(`commit ${base} is not in this clone (a shallow clone?): fetch the history with git fetch --unshallow`);
  }
  return git(cwd, ['log', '--format=%h %s', `${base}..HEAD`])
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => ({ hash: line.slice(0, line.indexOf(' ')), subject: line.slice(line.indexOf(' ') + 1) }))
    .filter(({ subject }) => [...subject].length > LIMIT)
    .map(({ hash, subject }) => `${hash} (${[...subject].length}) ${subject}`);
}

describe(`commit subjects since ${BASE}`, () => {
  it(`are at most ${LIMIT} characters`, () => {
    expect(longSubjects(projectRoot(), BASE)).to.deep.equal([]);
  });

  describe('the check itself', () => {
    let dir = '';
    const commit = (subject: string) => git(dir, ['-c', 'user.name=test', '-c', 'user.email=test@example.org', 'commit', '-q', '--allow-empty', '-m', subject, '-m', 'body']);

    beforeEach(() => {
      dir = mkdtempSync(join(tmpdir(), 'subjects-'));
    });
    afterEach(() => rmSync(dir, { recursive: true, force: true }));

    it('names each subject over the limit, counting characters, and only those after the base', () => {
      git(dir, ['init', '-q']);
      commit('x'.repeat(LIMIT + 20));
      const base = git(dir, ['rev-parse', 'HEAD']).trim();
      commit('é'.repeat(LIMIT));
      commit('y'.repeat(LIMIT + 1));
      const hash = git(dir, ['rev-parse', '--short', 'HEAD']).trim();
      expect(longSubjects(dir, base)).to.deep.equal([`${hash} (${LIMIT + 1}) ${'y'.repeat(LIMIT + 1)}`]);
    });

    it('fails with a clear message outside a git checkout', () => {
      expect(() => longSubjects(dir, BASE)).to.throw(/is not a git checkout/);
    });

    it('fails with a clear message when the base commit is missing', () => {
      git(dir, ['init', '-q']);
      commit('one');
      expect(() => longSubjects(dir, BASE)).to.throw(/commit c8bb601 is not in this clone/);
    });
  });
});
