/**
 * The Content-Security-Policy of every answer. JSON and other API answers load nothing. Our own
 * pages (the globe, the entry page, the energy panel) run under a strict policy, so injected markup
 * can run nothing: scripts and styles only from files of this origin, hence no inline script, no
 * `<style>` element and no `style` attribute in markup (styles set from script through the CSSOM
 * are not governed by style-src). /docs serves Swagger UI, a third-party bundle we do not audit
 * line by line: it keeps inline styles allowed, and only that page does.
 */
export const API_CSP = "default-src 'none'; frame-ancestors 'none'";

export const UI_CSP =
  "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; font-src 'self'; worker-src 'self'; object-src 'none'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

export const DOCS_CSP = "default-src 'self'; img-src 'self' data:; style-src 'self' 'unsafe-inline'; connect-src 'self'; frame-ancestors 'none'";

/** Which policy a served HTML page runs under. */
export type HtmlPolicy = 'ui' | 'docs';

export const HTML_CSP: Record<HtmlPolicy, string> = { ui: UI_CSP, docs: DOCS_CSP };
