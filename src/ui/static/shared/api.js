/**
 * Same-origin JSON fetch that never throws: a page shows "no data" for a missing or failing
 * route instead of breaking. Bodies of non-2xx answers are still returned (health and ledger
 * readiness answer 503 with the same document).
 */
export async function getJson(path, { timeoutMs = 8000 } = {}) {
  const ctrl = new AbortController();
  const timer = setTimeout(() => ctrl.abort(), timeoutMs);
  try {
    const res = await fetch(path, { headers: { accept: 'application/json' }, cache: 'no-store', signal: ctrl.signal });
    const isJson = (res.headers.get('content-type') || '').includes('json');
    const data = isJson ? await res.json() : null;
    return { ok: res.ok, status: res.status, data, error: res.ok ? null : `HTTP ${res.status}` };
  } catch (err) {
    return { ok: false, status: 0, data: null, error: err.name === 'AbortError' ? 'timed out' : String(err.message || err) };
  } finally {
    clearTimeout(timer);
  }
}

/** Runs `task` now and every `periodMs` while the page is visible; returns a stop function. */
export function whileVisible(task, periodMs) {
  let timer = null;
  const start = () => {
    if (timer !== null || document.hidden) return;
    task();
    timer = setInterval(task, periodMs);
  };
  const stop = () => {
    clearInterval(timer);
    timer = null;
  };
  const onVisibility = () => (document.hidden ? stop() : start());
  document.addEventListener('visibilitychange', onVisibility);
  start();
  return () => {
    document.removeEventListener('visibilitychange', onVisibility);
    stop();
  };
}
