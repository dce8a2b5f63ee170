/**
 * Tiny DOM helpers. Text from the APIs is only ever set as textContent, never as HTML, so a
 * callsign or vessel name cannot inject markup.
 */
export function el(tag, props = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(props)) {
    if (key === 'class') node.className = value;
    else if (key === 'text') node.textContent = value;
    else node.setAttribute(key, value);
  }
  for (const child of children) node.append(child);
  return node;
}

export function setText(id, text) {
  const node = document.getElementById(id);
  if (node) node.textContent = text;
}

/** Replaces the children of `id` with `nodes`, or with one "no data" line when there are none. */
export function fill(id, nodes, empty = 'no data') {
  const node = document.getElementById(id);
  if (!node) return;
  node.replaceChildren(...(nodes.length ? nodes : [el('li', { class: 'muted', text: empty })]));
}

export const fmt = (x, digits = 3) => (typeof x === 'number' && Number.isFinite(x) ? x.toFixed(digits) : '–');

export function timeOf(iso) {
  const d = new Date(iso);
  return Number.isNaN(d.getTime()) ? '–' : d.toISOString().slice(11, 19) + 'Z';
}
