/**
 * Every relative link in README.md and docs/*.md resolves: the file exists and, for a `#anchor`,
 * the target has a heading that GitHub gives that anchor, or an `<a id=…>`/`<a name=…>`.
 */
import { expect } from 'chai';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { projectRoot } from '../../src/config/load.js';

const ROOT = projectRoot();

/** `text` without fenced code blocks and inline code spans, line breaks kept. */
function prose(text: string): string {
  let fenced = false;
  return text
    .split('\n')
    .map((line) => {
      if (/^\s*(```|~~~)/.test(line)) {
        fenced = !fenced;
        return '';
      }
      return fenced ? '' : line.replace(/`[^`]*`/g, '');
    })
    .join('\n');
}

/** GitHub's anchor for a heading: code marks and emphasis stars dropped, lower case, punctuation removed, spaces to hyphens. */
export function slug(heading: string): string {
  return heading
    .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/[`*]/g, '')
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/ /g, '-');
}

/** Every anchor a Markdown text defines: its headings (a repeated one gets -1, -2, …) and explicit `<a id>`s. */
export function anchorsOf(text: string): Set<string> {
  const out = new Set<string>();
  const seen = new Map<string, number>();
  let fenced = false;
  for (const line of text.split('\n')) {
    if (/^\s*(```|~~~)/.test(line)) fenced = !fenced;
    if (fenced) continue;
    const h = /^#{1,6}\s+(.+?)\s*#*\s*$/.exec(line);
    if (h) {
      const base = slug(h[1]!);
      const n = seen.get(base) ?? 0;
      seen.set(base, n + 1);
      out.add(n ? `${base}-${n}` : base);
    }
    for (const m of line.matchAll(/<a\s+(?:id|name)="([^"]+)"/g)) out.add(m[1]!);
  }
  return out;
}

/** The broken relative links of the Markdown file `file` (from ROOT), as `file: target (why)`. */
export function brokenLinks(file: string, text: string, read: (path: string) => string | null): string[] {
  const out: string[] = [];
  for (const m of prose(text).matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)) {
    const target = m[1]!;
    if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue; // http:, https:, mailto:
    const [path, anchor] = target.split('#', 2) as [string, string | undefined];
    const resolved = path ? join(dirname(file), decodeURIComponent(path)) : file;
    const body = read(resolved);
    if (body === null) {
      out.push(`${file}: ${target} (no file ${resolved})`);
      continue;
    }
    if (anchor && resolved.endsWith('.md') && !anchorsOf(body).has(anchor)) out.push(`${file}: ${target} (no heading or <a id> "${anchor}" in ${resolved})`);
  }
  return out;
}

function readRepo(path: string): string | null {
  const full = join(ROOT, path);
  if (!existsSync(full)) return null;
  try {
    return readFileSync(full, 'utf8');
  } catch {
    return ''; // a directory: it exists, and has no anchors
  }
}

describe('links in README.md and docs/', () => {
  it('GitHub anchors: punctuation dropped, code kept, repeats numbered', () => {
    expect(slug('Where the ledger lives: memory, file, postgres')).to.equal('where-the-ledger-lives-memory-file-postgres');
    expect(slug('The allocator: `MALLOC_TOP_PAD_`')).to.equal('the-allocator-malloc_top_pad_');
    expect(slug("The main thread's heap limit")).to.equal('the-main-threads-heap-limit');
    expect(slug('Tiles and proofs (C2SP tlog-tiles, tlog-proof)')).to.equal('tiles-and-proofs-c2sp-tlog-tiles-tlog-proof');
    expect([...anchorsOf('# A\n## B\n```\n# not a heading\n```\n## B\n- <a id="x"></a>**X**')]).to.deep.equal(['a', 'b', 'b-1', 'x']);
  });

  it('finds a missing file, a missing anchor and a link to a heading inside code, and ignores links in code and absolute URLs', () => {
    const files: Record<string, string> = { 'docs/a.md': '# Title\n\n## Real part\n\n```\n## Fake part\n```\n' };
    const read = (p: string) => files[p] ?? null;
    const text = [
      '[ok](docs/a.md#real-part) [bad file](docs/b.md) [bad anchor](docs/a.md#nothing) [in code](docs/a.md#fake-part)',
      '`[not a link](docs/zzz.md)` [web](https://example.org/x.md#y) [self](#here)',
      '```',
      '[also not a link](docs/yyy.md)',
      '```',
      '## Here',
    ].join('\n');
    files['README.md'] = text;
    expect(brokenLinks('README.md', text, read)).to.deep.equal([
      'README.md: docs/b.md (no file docs/b.md)',
      'README.md: docs/a.md#nothing (no heading or <a id> "nothing" in docs/a.md)',
      'README.md: docs/a.md#fake-part (no heading or <a id> "fake-part" in docs/a.md)',
    ]);
  });

  it('every relative link in the READMEs (root, bench, workers) and docs/*.md names a file that exists and an anchor it has', () => {
    const files = ['README.md', 'bench/README.md', 'workers/README.md', ...readdirSync(join(ROOT, 'docs')).filter((f) => f.endsWith('.md')).map((f) => join('docs', f))];
    expect(files.length).to.be.above(5);
    const broken = files.flatMap((f) => brokenLinks(relative(ROOT, join(ROOT, f)), readFileSync(join(ROOT, f), 'utf8'), readRepo));
    expect(broken).to.deep.equal([]);
    // README links into docs/ at all: the check is not vacuous
    expect(readFileSync(join(ROOT, 'README.md'), 'utf8')).to.match(/\]\(docs\/ledger\.md#/);
  });

  it('every runbook_url of the Prometheus alerts names a runbook anchor that exists (paths from the project root)', () => {
    const urls = [...readFileSync(join(ROOT, 'deploy/prometheus/rules.yml'), 'utf8').matchAll(/runbook_url: "([^"]+)"/g)].map((m) => m[1]!);
    expect(urls.length).to.be.at.least(10);
    expect(urls.flatMap((url) => brokenLinks('rules.yml', `[runbook](${url})`, readRepo))).to.deep.equal([]);
  });
});
