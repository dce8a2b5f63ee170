/** Same-origin JSON/text fetch that never throws: a failing route becomes "no data" on screen. */
export interface Fetched<T> {
  ok: boolean;
  status: number;
  data: T | null;
  error: string | null;
}

export async function getJson<T>(path: string, timeoutMs = 8000): Promise<Fetched<T>> {
  return get(path, timeoutMs, async (res) => ((res.headers.get('content-type') ?? '').includes('json') ? ((await res.json()) as T) : null));
}

export async function getText(path: string, timeoutMs = 8000): Promise<Fetched<string>> {
  return get(path, timeoutMs, (res) => res.text());
}

async function get<T>(path: string, timeoutMs: number, read: (r: Response) => Promise<T | null>): Promise<Fetched<T>> {
  const ctrl = new AbortController();
  const timer = setTimeout(() => ctrl.abort(), timeoutMs);
  try {
    const res = await fetch(path, { cache: 'no-store', signal: ctrl.signal });
    const data = await read(res);
    return { ok: res.ok, status: res.status, data, error: res.ok ? null : `HTTP ${res.status}` };
  } catch (err) {
    return { ok: false, status: 0, data: null, error: (err as Error).name === 'AbortError' ? 'timed out' : String((err as Error).message ?? err) };
  } finally {
    clearTimeout(timer);
  }
}

/** Runs `task` now and every `periodMs` while the page is visible; once more when it returns. */
export function whileVisible(task: () => unknown, periodMs: number): void {
  let timer: number | null = null;
  const start = () => {
    if (timer !== null || document.hidden) return;
    void task();
    timer = window.setInterval(() => void task(), periodMs);
  };
  const stop = () => {
    if (timer !== null) window.clearInterval(timer);
    timer = null;
  };
  document.addEventListener('visibilitychange', () => (document.hidden ? stop() : start()));
  start();
}
