/** Tiny DOM helpers: text only (never innerHTML), so API strings cannot inject markup. */
export function $(id: string): HTMLElement {
  const e = document.getElementById(id);
  if (!e) throw new Error(`#${id} missing`);
  return e;
}

type Child = Node | string | null | undefined | false;

export function el<K extends keyof HTMLElementTagNameMap>(tag: K, attrs: Record<string, string | number | boolean | undefined> = {}, ...children: Child[]): HTMLElementTagNameMap[K] {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === undefined || v === false) continue;
    if (k === 'text') e.textContent = String(v);
    else e.setAttribute(k, v === true ? '' : String(v));
  }
  for (const c of children) if (c !== null && c !== undefined && c !== false) e.append(c);
  return e;
}

export function setText(id: string, text: string): void {
  const e = document.getElementById(id);
  if (e && e.textContent !== text) e.textContent = text;
}

export function chipInto(id: string, chip: { text: string; tone: string; title: string }): void {
  const e = document.getElementById(id);
  if (!e) return;
  e.textContent = chip.text;
  e.className = `chip ${chip.tone}`;
  e.title = chip.title;
}
