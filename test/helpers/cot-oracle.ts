/**
 * Test oracles for CoT: xmllint-wasm with the MITRE CoT 2.0 base schema (strict validity), the
 * saved real samples, and @tak-ps/node-cot (lenient peer parser, loaded with a dynamic import:
 * it is ESM-only and ships TypeScript sources we do not type-check).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { validateXML } from 'xmllint-wasm';
import { projectRoot } from '../../src/config/load.js';

/** The repository's own copies of the real CoT samples and the MITRE schema (see test/fixtures/README.md). */
export const FIXTURES = join(projectRoot(), 'test', 'fixtures');
const XSD = readFileSync(join(FIXTURES, 'cot-schema', 'Event-PUBLIC.xsd'), 'utf8');

export const COT_SAMPLES: { file: string; xml: string }[] = readdirSync(join(FIXTURES, 'cot-samples'))
  .filter((f) => f.endsWith('.xml'))
  .sort()
  .map((file) => ({ file, xml: readFileSync(join(FIXTURES, 'cot-samples', file), 'utf8') }));

/** Validity of each document against the XSD, in one xmllint run (about 60 ms per run). */
export async function xsdValid(docs: string[]): Promise<boolean[]> {
  const files = docs.map((contents, i) => ({ fileName: `doc${i}.xml`, contents }));
  const r = await validateXML({ xml: files, schema: [{ fileName: 'Event-PUBLIC.xsd', contents: XSD }] });
  // xmllint prints "<file> validates" or "<file> fails to validate" for each document
  return files.map((f) => new RegExp(`^${f.fileName} validates$`, 'm').test(r.rawOutput));
}

export interface NodeCot {
  uid(): string;
  callsign(): string;
  raw: { event: { _attributes: Record<string, string>; point: { _attributes: Record<string, string> }; detail?: Record<string, { _attributes?: Record<string, string> }> } };
}

let cotClass: (new (xml: string) => NodeCot) | null = null;

export async function nodeCot(): Promise<new (xml: string) => NodeCot> {
  if (!cotClass) {
    const specifier = '@tak-ps/node-cot';
    const mod = (await import(specifier)) as { default: new (xml: string) => NodeCot };
    cotClass = mod.default;
  }
  return cotClass;
}
