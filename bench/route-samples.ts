/**
 * One valid sample call per GET route of a route table: required query keys filled (`request`
 * gets a label), path parameters filled with ids the running app really serves (claims, sections,
 * assets), so each call reaches its handler's real work rather than a cheap 404 or 422.
 */
import { described } from '../src/http/schema-walk.js';
import type { RouteDef } from '../src/http/route.js';
import { CLAIMS } from '../src/evidence/claims.js';
import { SECTIONS } from '../src/evidence/readiness.js';


function requiredQuery(r: RouteDef): string {
  const keys = described(r.query)?.keys ?? {};
  const pairs = Object.entries(keys)
    .filter(([, v]) => v.flags?.presence === 'required')
    .map(([k, v]) => `${k}=${v.type === 'string' ? 'sample' : '1'}`);
  return pairs.length ? `?${pairs.join('&')}` : '';
}

/** `base` serves the app: the asset manifest names the files behind the file routes. */
export async function routeSamples(routes: readonly RouteDef[], base: string): Promise<string[]> {
  const manifest = (await (await fetch(`${base}/api/svc/v1/assets/manifest`)).json()) as { assets?: { key: string; path: string }[] };
  const assets = manifest.assets ?? [];
  const under = (dir: string): string | undefined => assets.find((a) => a.path.startsWith(`/${dir}/`))?.path.slice(dir.length + 2);
  const values: Record<string, string | undefined> = {
    claim_id: CLAIMS[0]?.claim_id,
    section_id: SECTIONS[0]?.id,
    key: assets[0]?.key,
    jk_path: under('jackin'),
    fname: under('shared'),
    file: 'swagger-ui.css',
    track_id: 'svc-track-unknown',
  };
  const out: string[] = [];
  for (const r of routes) {
    if (r.method !== 'GET') continue;
    // the stream never ends: its own tests and bench cover it
    if (r.path.endsWith('/stream/verdicts')) continue;
    const path = r.path.replace(/:([A-Za-z_]+)/g, (_, name: string) => encodeURIComponent(values[name] ?? 'sample'));
    out.push(path + requiredQuery(r));
  }
  return out;
}
