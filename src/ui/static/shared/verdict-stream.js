/**
 * Follows the signed-verdict SSE stream while the page is visible. A hidden or closed page drops
 * its connection: the server runs the simulated flight only while somebody watches, and a
 * background tab should not keep it (and the ledger) growing.
 */
const STREAM = '/api/svc/v1/stream/verdicts';

export function followVerdicts({ onVerdict, onState = () => {} }) {
  let source = null;
  const open = () => {
    if (source || document.hidden) return;
    const es = new EventSource(STREAM);
    source = es;
    onState('connecting');
    es.onopen = () => onState('live');
    // a non-200 answer (503 when the viewer limit is reached) closes the source for good
    es.onerror = () => onState(es.readyState === EventSource.CLOSED ? 'closed by server' : 'reconnecting');
    es.addEventListener('verdict', (e) => {
      try {
        onVerdict(JSON.parse(e.data));
      } catch {
        // a malformed event is skipped; the next one carries the full state again
      }
    });
  };
  const close = (state) => {
    if (source) source.close();
    source = null;
    onState(state);
  };
  const onVisibility = () => (document.hidden ? close('paused (page hidden)') : open());
  const onPageHide = () => close('stopped');
  document.addEventListener('visibilitychange', onVisibility);
  window.addEventListener('pagehide', onPageHide);
  open();
  return () => {
    document.removeEventListener('visibilitychange', onVisibility);
    window.removeEventListener('pagehide', onPageHide);
    close('stopped');
  };
}
