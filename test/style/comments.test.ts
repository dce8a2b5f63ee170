import { expect } from 'chai';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import ts from 'typescript';
import { projectRoot } from '../../src/config/load.js';

// A comment or a test title says the reason itself: a pointer to an issue item, a design note's
// section or a bench pass sends the reader elsewhere and goes stale when that text is renumbered.
// External sources (an RFC section, a paper, a library's file) are not ours and stay citable.
const ROOT = projectRoot();
const FOLDERS = ['src', 'workers', 'test'];
const SOURCE = /\.(ts|mts|cts|mjs|cjs)$/;
// the notes of the shared specification, by the names comments gave them
const NOTE_NAMES = 'ui|adsb-cot|domain-data|scale-out|ledger-signing|node-perf-style|tlog|tak|operations';
const ORDINAL = 'fourth|fifth|sixth|seventh|eighth|ninth|tenth|eleventh|twelfth|thirteenth|fourteenth|fifteenth|sixteenth|seventeenth|eighteenth|nineteenth|twentieth|\\d+(?:st|nd|rd|th)';
const CITATIONS: readonly { kind: string; pattern: RegExp }[] = [
  // another project's issue, named with its repository, is an external source
  { kind: 'issue', pattern: /(?<![\w.-]+\/[\w.-]+ )\bissues? #?\d+/i },
  // a numbered item followed by a colon, a bracket or a list cites an issue; "item 3 of the array" does not
  { kind: 'issue item', pattern: /\bitems? \d+(?=\s*[,:)]|\s+and\b)/i },
  { kind: 'note section', pattern: /\bnotes?,? (?:section )?[A-Z]?\d+(?:\.\d+)*\b/i },
  { kind: 'note', pattern: /\bnotes? \[S\d+\]/i },
  { kind: 'note', pattern: new RegExp(`\\b(?:${NOTE_NAMES}) notes?\\b`, 'i') },
  { kind: 'note', pattern: /\bnotes\/|(?<!docs\/)\b(?:interface|design|scale-out|operations|ledger-signing|node-perf-style|domain-data|adsb-cot)\.md\b/i },
  { kind: 'spec section', pattern: /\b(?:design|interface|spec)(?:'s)? (?:section )?\d+(?:\.\d+)?\b(?!\.\d)/i },
  { kind: 'spec section', pattern: /\b(?:design|interface) section\b/i },
  { kind: 'bench pass', pattern: /\bdocs\/bench\.md\b|\bbench\/README\b/i },
  { kind: 'bench pass', pattern: new RegExp(`\\b(?:${ORDINAL}) pass\\b|\\bbench(?:mark)? pass \\d`, 'i') },
  // a quoted heading of the bench record: a capital, then words ending in the word pass
  { kind: 'bench pass', pattern: /"[A-Z][^"]*\b[Pp]ass"/ },
];
const TEST_CALLS = new Set(['describe', 'context', 'it', 'specify', 'suite', 'test']);

export interface Citation {
  line: number;
  kind: string;
  where: 'comment' | 'title';
  text: string;
}

/** The text of a comment as one line: its markers and each line's leading `*` removed. */
function commentText(raw: string): string {
  return raw
    .replace(/^\/\/|^\/\*\*?|\*\/$/g, '')
    .split('\n')
    .map((l) => l.replace(/^\s*(?:\*(?!\/)|\/\/)?/, ''))
    .join(' ')
    .replace(/\s+/g, ' ')
    .trim();
}

/** The title a describe/it call is given, when its first argument is written out (`${x}` kept as is). */
function title(node: ts.CallExpression): string | null {
  let callee: ts.Expression = node.expression;
  while (ts.isPropertyAccessExpression(callee)) callee = callee.expression; // it.only, describe.skip
  if (!ts.isIdentifier(callee) || !TEST_CALLS.has(callee.text)) return null;
  const first = node.arguments[0];
  if (!first) return null;
  if (ts.isStringLiteral(first) || ts.isNoSubstitutionTemplateLiteral(first)) return first.text;
  if (ts.isTemplateExpression(first)) return first.head.text + first.templateSpans.map((s) => '${…}' + s.literal.text).join('');
  return null;
}

function cited(text: string): string | null {
  return CITATIONS.find((c) => c.pattern.test(text))?.kind ?? null;
}

const scanner = ts.createScanner(ts.ScriptTarget.Latest, false);

/** Every comment and test title in one source text that cites an issue, a note or a bench pass. */
export function citations(source: string, fileName = 'inline.ts'): Citation[] {
  const file = ts.createSourceFile(fileName, source, ts.ScriptTarget.Latest, false, /\.(mjs|cjs|js)$/.test(fileName) ? ts.ScriptKind.JS : ts.ScriptKind.TS);
  const found: Citation[] = [];
  const lineOf = (pos: number): number => file.getLineAndCharacterOfPosition(pos).line + 1;
  const check = (text: string, pos: number, where: Citation['where']): void => {
    const kind = cited(text);
    if (kind) found.push({ line: lineOf(pos), kind, where, text });
  };
  // text between a node's children holds only punctuation, keywords and trivia (a literal is always
  // a child), so a plain scan of it cannot mistake a regular expression or a string for a comment
  const gap = (from: number, to: number): void => {
    if (to <= from) return;
    scanner.setText(source, from, to - from);
    for (let k = scanner.scan(); k !== ts.SyntaxKind.EndOfFileToken; k = scanner.scan()) {
      if (k === ts.SyntaxKind.SingleLineCommentTrivia || k === ts.SyntaxKind.MultiLineCommentTrivia) check(commentText(scanner.getTokenText()), scanner.getTokenStart(), 'comment');
    }
  };
  const visit = (node: ts.Node): void => {
    if (ts.isCallExpression(node)) {
      const t = title(node);
      if (t !== null) check(t, node.getStart(file), 'title');
    }
    let at = node.pos;
    let children = false;
    ts.forEachChild(node, (child) => {
      children = true;
      gap(at, child.pos);
      visit(child);
      at = child.end;
    });
    // a token (a name, a literal) is scanned only up to its own text; an empty `{ }` is scanned whole
    if (children) gap(at, node.end);
    else gap(node.pos, ts.isToken(node) ? node.getStart(file) : node.end);
  };
  visit(file);
  return found.sort((a, b) => a.line - b.line);
}

function* sources(dir: string): Generator<string> {
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) yield* sources(path);
    else if (SOURCE.test(name)) yield path;
  }
}

describe('comments and test titles say the reason, not where it was written down', () => {
  it('finds a cited issue item, note section or bench pass in a comment or a title, and leaves plain words alone', () => {
    const planted = [
      '/**',
      ' * Group commit in front of a store (scale-out note 2.2).',
      ' */',
      'export const a = 1; // see docs/bench.md, "Ninth pass"',
      "describe('the hub (issue 17 items 3, 6)', () => {",
      "  it('item 8: a dropped viewer is reset', () => {",
      '    /* the kernels ran 21 % slower (eleventh pass) */',
      '  });',
      "  it(`design 4 weights for ${name}`, () => {});",
      '  // Interface 4.9: the pages',
      '  const b = { c: 2 }; // ledger-signing note 6.3/6.4',
      '  // (node-perf-style note, M7)',
      '});',
      '// the snapshot is fresh for 10 s (design 5)',
      'try { f(); } catch { /* fixed in issue #16 */ }',
    ].join('\n');
    const found = citations(planted);
    expect(found.map((c) => [c.line, c.where, c.kind])).to.deep.equal([
      [1, 'comment', 'note section'],
      [4, 'comment', 'bench pass'],
      [5, 'title', 'issue'],
      [6, 'title', 'issue item'],
      [7, 'comment', 'bench pass'],
      [9, 'title', 'spec section'],
      [10, 'comment', 'spec section'],
      [11, 'comment', 'note section'],
      [12, 'comment', 'note section'],
      [14, 'comment', 'spec section'],
      [15, 'comment', 'issue'],
    ]);

    const innocent = [
      '// one pass over the axes; every request passes here, the check must pass',
      '// RFC 9110 §13.1.2 and RFC 6962 section 2.1; DSSE (spec 1.0.2); arXiv:2306.14048; the first pass of real tasks',
      '// item 3 of the array is the newest; the interface is small; design notes aside, nothing',
      '// nodejs/node issue 46555 is theirs; docs/interface.md is ours; until("the check must pass")',
      "it('passes JSON numbers to the base type', () => {});",
      "until('the grace to pass', () => true);",
      "const s = 'issue 17 item 8 (interface 2.5)'; // a string is data, not a comment",
      "const r = /https?:\\/\\/x\\/issue 17/; const u = `//${r} note 3.1`; // a regex and a template are data too",
    ].join('\n');
    expect(citations(innocent)).to.deep.equal([]);
  });

  it('no reference document, nor the text it is generated from, cites a bench pass', () => {
    const PASS = CITATIONS.filter((c) => c.kind === 'bench pass' && !c.pattern.test('docs/bench.md'));
    const docs = ['README.md', 'bench/README.md', ...readdirSync(join(ROOT, 'docs')).map((n) => `docs/${n}`), ...readdirSync(join(ROOT, 'src/docs')).map((n) => `src/docs/${n}`)];
    const offenders = docs.flatMap((d) =>
      readFileSync(join(ROOT, d), 'utf8')
        .split('\n')
        .flatMap((line, i) => (PASS.some((c) => c.pattern.test(line)) ? [`${d}:${i + 1}: ${line.slice(0, 120)}`] : [])),
    );
    expect(PASS.length, 'the pass patterns').to.equal(2);
    expect(offenders).to.deep.equal([]);
  });

  it('no comment or test title in src, workers or test cites an issue item, a note section or a bench pass', () => {
    const offenders: string[] = [];
    let scanned = 0;
    for (const folder of FOLDERS) {
      for (const path of sources(join(ROOT, folder))) {
        scanned += 1;
        for (const c of citations(readFileSync(path, 'utf8'), path)) offenders.push(`${relative(ROOT, path)}:${c.line}: ${c.where} cites ${c.kind}: ${c.text.slice(0, 160)}`);
      }
    }
    expect(scanned, 'files scanned').to.be.greaterThan(400);
    expect(offenders).to.deep.equal([]);
  });
});
