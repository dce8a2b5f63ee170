import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { sectionIn } from '../../src/docs/generated-section.js';
import { GOALS, GOALS_MARKERS, goalsTable, parseReport } from '../../bench/goals.js';
import { readmeWithGoals } from '../../bench/write-goals.js';

const ROOT = join(fileURLToPath(import.meta.url), '../../..');
const REPORT = readFileSync(join(ROOT, 'bench/REPORT.md'), 'utf8');

/** The table row of the goal whose text starts with `goal`, split into its three cells. */
function row(table: string, goal: string): string[] {
  const line = table.split('\n').find((l) => l.startsWith(`| ${goal}`));
  expect(line, `a row for ${goal}`).to.be.a('string');
  return line!.split(' | ').map((c) => c.replace(/^\| | \|$/g, ''));
}

describe('bench goals (bench/goals.ts, npm run bench:goals)', () => {
  it('the goals table of the benches\' README is the one generated from the committed REPORT.md', () => {
    const readme = readFileSync(join(ROOT, 'bench/README.md'), 'utf8');
    expect(sectionIn(readme, GOALS_MARKERS), 'run `npm run bench:goals`').to.equal(goalsTable(parseReport(REPORT)));
    expect(readmeWithGoals(readme, REPORT)).to.equal(readme);
  });

  it('reads every goal off the report: each has a figure, and the date and commit are named', () => {
    const report = parseReport(REPORT);
    for (const g of GOALS) expect(g.figures(report).filter((f) => f.value !== null).length, g.goal).to.be.greaterThan(0);
    expect(report.generated).to.match(/^\d{4}-\d{2}-\d{2}, commit [0-9a-f]{7}/);
    const table = goalsTable(report);
    expect(table).to.not.contain('no figure');
    expect(table).to.not.contain('not measured');
  });

  it('judges each figure against its threshold: a ratio moved below it turns the goal to not met', () => {
    const met = goalsTable(parseReport(REPORT));
    expect(row(met, 'unknown path (404)')[2]).to.equal('**met**');
    const slower = REPORT.replace(/^(\| GET unknown path \(404\) \|[^\n]*\| )0\.97× /m, '$10.80× ');
    expect(slower).to.not.equal(REPORT);
    const table = goalsTable(parseReport(slower));
    expect(row(table, 'unknown path (404)').slice(1)).to.deep.equal(['0.80×', 'not met']);
    // the other goals read other rows and do not move
    expect(row(table, '`/doctrine`')).to.deep.equal(row(met, '`/doctrine`'));
  });

  it('names which of several figures miss, and says so when the report lacks a section', () => {
    const kernels = row(goalsTable(parseReport(REPORT)), 'a kernel route');
    expect(kernels[1]!.split('; ')).to.have.length(6);
    expect(kernels[1]).to.contain('ssm/scan (a core left)');
    const missed = kernels[1]!.split('; ').filter((f) => Number(/([\d.]+)×$/.exec(f)![1]) < 0.8).length;
    expect(kernels[2]).to.equal(missed ? `not met by ${missed} of 6` : '**met**');

    const withoutWarmup = REPORT.replace(/## warmup[\s\S]*?(?=\n## )/, '');
    expect(withoutWarmup).to.not.equal(REPORT);
    expect(row(goalsTable(parseReport(withoutWarmup)), 'first kernel call').slice(1)).to.deep.equal(['no row in the report', 'not measured']);
  });

  it('lower-is-better goals: the saturated ratio and bytes per node', () => {
    const over = REPORT.replace(/"bytesPerNode": [\d.]+/, '"bytesPerNode": 1100.4');
    expect(row(goalsTable(parseReport(over)), 'memory per ledger node').slice(1)).to.deep.equal(['1100 B', 'not met']);
    const under = REPORT.replace(/^(\| \/health, pool saturated \(200\/s paced\) \|[^\n]*\| )[\d.]+× /m, '$11.50× ');
    expect(row(goalsTable(parseReport(under)), '`/health` p99').slice(1)).to.deep.equal(['1.50×', '**met**']);
  });
});
