import { expect } from 'chai';
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';

/** Starts the real entry point (src/main.ts under tsx) on a free port. */
async function startService(env: Record<string, string> = {}): Promise<{ child: ChildProcess; base: string; lines: string[] }> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
    env: { ...process.env, NODE_ENV: 'test', LOG_LEVEL: 'info', PORT: '0', HOST: '127.0.0.1', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const lines: string[] = [];
  const rl = createInterface({ input: child.stdout! });
  const port = await new Promise<number>((resolve, reject) => {
    rl.on('line', (line) => {
      lines.push(line);
      const msg = JSON.parse(line) as { msg?: string; port?: number };
      if (msg.msg === 'listening') resolve(msg.port!);
    });
    child.once('exit', (code) => reject(new Error(`exited early with ${code}`)));
  });
  return { child, base: `http://127.0.0.1:${port}`, lines };
}

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
