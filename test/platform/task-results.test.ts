import { expect } from 'chai';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Piscina } from 'piscina';
import { isPiscinaQueueFull, threadLost } from '../../src/platform/task-results.js';

// piscina rejects with plain Errors (no code, no exported class): the two checks that read their
// messages are held here to what the installed piscina really raises, so an upgrade that changes
// a message fails this test instead of turning a full queue into a 500.

describe('src/platform/task-results: the errors piscina raises, recognised', function () {
  let dir: string;
  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'svc-piscina-'));
    writeFileSync(join(dir, 'hang.mjs'), 'export default () => new Promise(() => {});\n');
    writeFileSync(join(dir, 'exit.mjs'), "import process from 'node:process';\nexport default () => process.exit(3);\n");
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('a task beyond maxQueue is rejected with what isPiscinaQueueFull recognises; other errors are not', async () => {
    const pool = new Piscina({ filename: pathToFileURL(join(dir, 'hang.mjs')).href, minThreads: 1, maxThreads: 1, maxQueue: 1 });
    const running = [pool.run(null), pool.run(null)];
    for (const p of running) p.catch(() => {});
    const err = await pool.run(null).then(
      () => null,
      (e: unknown) => e,
    );
    expect(isPiscinaQueueFull(err), String(err)).to.equal(true);
    expect(isPiscinaQueueFull(new Error('Task queue is at limit, said someone else'))).to.equal(false);
    expect(isPiscinaQueueFull(undefined)).to.equal(false);
    await pool.destroy();
  });

  it('a task whose thread exits is rejected with what threadLost recognises', async () => {
    const pool = new Piscina({ filename: pathToFileURL(join(dir, 'exit.mjs')).href, minThreads: 1, maxThreads: 1 });
    const err = await pool.run(null).then(
      () => null,
      (e: unknown) => e,
    );
    expect(threadLost(err), String(err)).to.equal(true);
    expect(threadLost(Object.assign(new Error('heap'), { code: 'ERR_WORKER_OUT_OF_MEMORY' }))).to.equal(true);
    expect(threadLost(new Error('kernel failed'))).to.equal(false);
    await pool.destroy();
  });
});
