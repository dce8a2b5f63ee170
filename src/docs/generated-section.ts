/**
 * A generated section of a Markdown file: the text between two HTML comment markers, which a
 * command rewrites and a test regenerates to catch drift. Everything outside the markers is prose.
 */

export interface Markers {
  start: string;
  end: string;
}

/** The section between the markers of `text`, trimmed, or null when it has no markers. */
export function sectionIn(text: string, m: Markers): string | null {
  const a = text.indexOf(m.start);
  const b = text.indexOf(m.end);
  if (a < 0 || b < a) return null;
  return text.slice(a + m.start.length, b).trim();
}

/** `text` with the section between its markers replaced by `body`. */
export function withSection(text: string, m: Markers, body: string): string {
  const a = text.indexOf(m.start);
  const b = text.indexOf(m.end);
  if (a < 0 || b < a) throw new Error(`no ${m.start} … ${m.end} markers`);
  return `${text.slice(0, a + m.start.length)}\n${body}\n${text.slice(b)}`;
}
