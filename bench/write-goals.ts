/** `npm run bench:goals`: rewrites the goals table in bench/README.md from bench/REPORT.md. */
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { withSection } from '../src/docs/generated-section.js';
import { GOALS_MARKERS, goalsTable, parseReport } from './goals.js';

const README = new URL('./README.md', import.meta.url);
const REPORT = new URL('./REPORT.md', import.meta.url);

/** bench/README.md with its goals table regenerated from the report's text. */
export function readmeWithGoals(readme: string, report: string): string {
  return withSection(readme, GOALS_MARKERS, goalsTable(parseReport(report)));
}

/** Rewrites bench/README.md's goals from the committed report; returns the README's path. */
export function writeGoals(): string {
  writeFileSync(README, readmeWithGoals(readFileSync(README, 'utf8'), readFileSync(REPORT, 'utf8')));
  return fileURLToPath(README);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) console.log(`goals written to ${writeGoals()}`);
