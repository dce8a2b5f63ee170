/**
 * Runs shell commands in a fresh temp directory (openssl and verify_offline tests). Asynchronous
 * on purpose: the recipe fetches the public key from the test server in this same process.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export async function withTempDir<T>(fn: (dir: string) => Promise<T>): Promise<T> {
  const dir = await mkdtemp(join(tmpdir(), 'svc-test-'));
  try {
    return await fn(dir);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** bash -c in `dir`; stdout+stderr and the exit status (never rejects on a non-zero exit). */
export function sh(dir: string, script: string): Promise<{ out: string; status: number }> {
  return new Promise((resolve) => {
    execFile('bash', ['-c', `${script} 2>&1`], { cwd: dir, encoding: 'utf8', timeout: 20000 }, (err, stdout) => {
      resolve({ out: stdout, status: err ? ((err as { code?: number }).code ?? 1) : 0 });
    });
  });
}

export function write(dir: string, name: string, content: string | Buffer): Promise<void> {
  return writeFile(join(dir, name), content);
}
