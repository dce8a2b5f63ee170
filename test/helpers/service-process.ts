/** The real entry point (src/main.ts under tsx) as a child process on a free 127.0.0.1 port. */
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { createInterface } from 'node:readline';

export interface ServiceProcess {
  child: ChildProcess;
  base: string;
  /** Every JSON log line the service printed so far. */
  lines: string[];
  /** Everything it wrote to stderr. */
  stderr: () => string;
}

/**
 * Starts the service and resolves once it logs `serving` (the app answers), or `listening` (the
 * port is open and answers 503 `starting`) with `at: 'listening'`.
 */
export async function startService(env: Record<string, string> = {}, at: 'listening' | 'serving' = 'serving'): Promise<ServiceProcess> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
    env: { ...process.env, NODE_ENV: 'test', LOG_LEVEL: 'info', PORT: '0', HOST: '127.0.0.1', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const lines: string[] = [];
  let stderr = '';
  child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
  const rl = createInterface({ input: child.stdout! });
  // the port opens first (503 `starting`); the service is up once it logs `serving`
  let listening = 0;
  const port = await new Promise<number>((resolve, reject) => {
    rl.on('line', (line) => {
      lines.push(line);
      let msg: { msg?: string; port?: number };
      try {
        msg = JSON.parse(line) as typeof msg;
      } catch {
        return;
      }
      if (msg.msg === 'listening') listening = msg.port!;
      if (msg.msg === at) resolve(listening);
    });
    child.once('exit', (code) => reject(new Error(`service exited early with ${code}: ${stderr.slice(-2000)}`)));
  });
  return { child, base: `http://127.0.0.1:${port}`, lines, stderr: () => stderr };
}

/** Runs the entry point to its exit (for start-up failures): exit code and stderr. */
export async function runServiceToEnd(env: Record<string, string>): Promise<{ code: number | null; stderr: string; stdout: string }> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
    env: { ...process.env, NODE_ENV: 'test', LOG_LEVEL: 'info', PORT: '0', HOST: '127.0.0.1', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  let stdout = '';
  child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
  child.stdout!.on('data', (d: Buffer) => (stdout += d.toString()));
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
  return { code, stderr, stdout };
}

/** The service's main-thread CPU time in ms (Linux): its kernel and signing threads do not count. */
export function mainThreadCpuMs(svc: ServiceProcess): number {
  const pid = svc.child.pid!;
  return Number(readFileSync(`/proc/${pid}/task/${pid}/schedstat`, 'utf8').split(' ')[0]) / 1e6;
}

/** SIGKILL, and wait for the exit. */
export async function killService(svc: ServiceProcess): Promise<void> {
  svc.child.kill('SIGKILL');
  if (svc.child.exitCode === null && svc.child.signalCode === null) await once(svc.child, 'exit');
}

/**
 * Resolves once the service's main thread has gone quiet (under `idleMs` of CPU in a 200 ms
 * window): start-up work done in slices after the port opens must not count in a measurement.
 */
export async function settled(svc: ServiceProcess, idleMs = 2, timeoutMs = 120_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const before = mainThreadCpuMs(svc);
    await new Promise((r) => setTimeout(r, 200));
    if (mainThreadCpuMs(svc) - before < idleMs) return;
    if (Date.now() > deadline) throw new Error(`the service's main thread did not go quiet within ${timeoutMs} ms`);
  }
}
