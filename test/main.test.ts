import { expect } from 'chai';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { startService } from './helpers/service-process.js';

describe('src/main.ts (process entry)', function () {
  this.timeout(30000);

  it('shuts down gracefully on SIGTERM: the in-flight request completes, exit 0 in under 5 s', async () => {
    const { child, base, lines } = await startService();
    const inflight = fetch(`${base}/api/svc/v1/ssm/scan?seq_len=4096&state_dim=32`);
    await new Promise((r) => setTimeout(r, 30));
    const t0 = Date.now();
    child.kill('SIGTERM');
    const res = await inflight;
    expect(res.status).to.equal(200);
    expect(((await res.json()) as { kernel: string }).kernel).to.equal('ssm/scan');
    const [code] = (await once(child, 'exit')) as [number];
    expect(code).to.equal(0);
    const stopMs = Date.now() - t0;
    expect(stopMs).to.be.below(5000);
    expect(lines.some((l) => l.includes('"msg":"stopped"'))).to.equal(true);
  });

  it('refuses to start with an invalid setting, naming the key', async () => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], { env: { ...process.env, PORT: 'eighty' }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
    const [code] = (await once(child, 'exit')) as [number];
    expect(code).to.equal(2);
    expect(stderr).to.match(/server\.port \(env PORT\)/);
  });
});
