/**
 * Checks a whole ledger offline: records, chain, signatures (on worker threads), tiles, checkpoint.
 *   npm run ledger:fsck -- <data dir | postgres URL> [--threads N]
 * Exit 0: the log verifies (one summary line). 1: damaged (the first bad node and why). 2: usage.
 * Progress goes to stderr: one line redrawn on a terminal, else a line per 10 %.
 */
import { statSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { parseArgs } from 'node:util';
import { Piscina } from 'piscina';
import { fsckDataDir, fsckPostgres, NotALedgerError, signatureCheck, type FsckProgress, type FsckReport } from '../ledger/fsck.js';
import { entryNextTo, workerSource } from '../platform/worker-source.js';
import type { TaskResult, VerifyTask } from '../lib/tasks.js';

const USAGE = 'usage: npm run ledger:fsck -- <data dir | postgres URL> [--threads N]\n';

function usage(why: string): never {
  process.stderr.write(`ledger:fsck: ${why}\n${USAGE}`);
  process.exit(2);
}

function options(): { target: string; threads: number } {
  let parsed;
  try {
    parsed = parseArgs({ options: { threads: { type: 'string' } }, allowPositionals: true, strict: true });
  } catch (err) {
    usage((err as Error).message);
  }
  const [target, ...extra] = parsed.positionals;
  if (!target) usage('name a data directory or a postgres URL');
  if (extra.length) usage(`one log at a time (also given: ${extra.join(' ')})`);
  const threads = parsed.values.threads === undefined ? availableParallelism() : Number(parsed.values.threads);
  if (!Number.isInteger(threads) || threads < 1 || threads > 256) usage('--threads is a whole number from 1 to 256');
  return { target, threads };
}

const fmt = (n: number): string => Math.round(n).toLocaleString('en-US');
const clock = (s: number): string => (s >= 60 ? `${Math.floor(s / 60)}m${String(Math.round(s % 60)).padStart(2, '0')}s` : `${Math.round(s)}s`);

/** A bar redrawn in place on a terminal; elsewhere (logs, CI) a line at each 10 % crossed. */
function progressBar(stream: NodeJS.WriteStream): { update(p: FsckProgress): void; end(): void } {
  const started = performance.now();
  let tenths = 0;
  let drawn = false;
  return {
    update(p) {
      const share = p.total > 0 ? Math.min(1, p.done / p.total) : 0;
      const seconds = (performance.now() - started) / 1000;
      const rate = seconds > 0 ? p.done / seconds : 0;
      const eta = rate > 0 ? clock((p.total - p.done) / rate) : '?';
      const figures = `${(share * 100).toFixed(1).padStart(5)} %  ${fmt(p.done)}/${fmt(p.total)} entries  ${fmt(rate)} entries/s  ETA ${eta}`;
      if (stream.isTTY) {
        const width = 24;
        const bar = '#'.repeat(Math.round(share * width)).padEnd(width, '.');
        stream.write(`\r[${bar}] ${figures} (${p.phase})\x1b[K`);
        drawn = true;
      } else if (Math.floor(share * 10) > tenths) {
        tenths = Math.floor(share * 10);
        stream.write(`ledger:fsck: ${figures}\n`);
      }
    },
    end() {
      if (drawn) stream.write('\n');
    },
  };
}

function summary(r: FsckReport): string {
  const cp = r.checkpoint ? (r.checkpoint.verified ? `checkpoint ${fmt(r.checkpoint.size!)} verified` : `checkpoint NOT verified: ${r.checkpoint.reason}`) : 'no checkpoint';
  const tiles = `${r.tiles.levels} tile level${r.tiles.levels === 1 ? '' : 's'} (${fmt(r.tiles.hashes)} hashes, ${fmt(r.tiles.interiors)} tile interiors)`;
  return `${fmt(r.nodes)} entries, ${fmt(r.signatures)} signatures, ${tiles}, ${cp}; ${fmt(r.entriesPerSecond)} entries/s in ${(r.ms / 1000).toFixed(1)} s`;
}

async function main(): Promise<number> {
  const { target, threads } = options();
  const postgres = /^postgres(ql)?:\/\//.test(target);
  if (!postgres && !statSync(target, { throwIfNoEntry: false })?.isDirectory()) usage(`${target} is not a directory`);
  const pool = new Piscina({ ...workerSource(entryNextTo('../../workers/verify-host', import.meta.url)), minThreads: threads, maxThreads: threads });
  const verifySignatures = signatureCheck(async (task: VerifyTask) => {
    const r = (await pool.run(task)) as TaskResult<boolean[]>;
    if (!r.ok) throw new Error(`verify thread: ${r.error.msg}`);
    return r.value;
  });
  const abort = new AbortController();
  process.once('SIGINT', () => abort.abort(new Error('interrupted')));
  const bar = progressBar(process.stderr);
  const opts = { verifySignatures, inFlight: threads * 2, onProgress: bar.update, signal: abort.signal };
  let report: FsckReport;
  try {
    report = postgres ? await fsckPostgres(target, opts) : await fsckDataDir(target, opts);
  } catch (err) {
    bar.end();
    if (err instanceof NotALedgerError) usage(err.message);
    if (abort.signal.aborted) {
      process.stderr.write('ledger:fsck: interrupted; nothing was concluded\n');
      return 130;
    }
    throw err;
  } finally {
    await pool.destroy();
  }
  bar.end();
  if (report.ok) {
    process.stdout.write(`ledger:fsck: OK: ${summary(report)}\n`);
    return 0;
  }
  const bad = report.firstBad ? `first bad node ${report.firstBad.index}: ${report.firstBad.reason}` : `checkpoint: ${report.checkpoint?.reason}`;
  process.stdout.write(`ledger:fsck: DAMAGED: ${bad}\nledger:fsck: ${summary(report)}\n`);
  return 1;
}

process.exitCode = await main();
