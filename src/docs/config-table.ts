/**
 * The configuration table of docs/configuration.md, generated from the config schema: one row per
 * leaf key of the joi schemas (src/config/schema.ts and each feature's `*.config.ts`), in schema
 * order, with the environment variable the loader reads for it, its default (the schema's, as the
 * loader resolves it with no config file) and its meaning (the key's `.description()`,
 * else its entry in config-meanings.ts). `npm run docs:config` rewrites the table; a test
 * regenerates it and fails on drift.
 */
import type { ObjectSchema } from 'joi';
import { configSchema } from '../config/schema.js';
import { ENV_KEYS } from '../config/load.js';
import type { Described } from '../http/schema-walk.js';
import { CONFIG_MEANINGS } from './config-meanings.js';
import { sectionIn, withSection, type Markers } from './generated-section.js';

/** The file that holds the table, from the project root. */
export const CONFIG_TABLE_FILE = 'docs/configuration.md';
export const CONFIG_TABLE_COMMAND = 'npm run docs:config';
export const CONFIG_TABLE_MARKERS: Markers = { start: '<!-- config:start -->', end: '<!-- config:end -->' };

export interface ConfigRow {
  /** Dotted config key, e.g. `server.port`. */
  key: string;
  /** The environment variable the loader reads for it, or null. */
  env: string | null;
  default: unknown;
  /** Markdown, or null when neither a description nor a meaning entry documents the key. */
  meaning: string | null;
}

export interface ConfigSources {
  schema: ObjectSchema;
  meanings: Readonly<Record<string, string>>;
  /** Environment variable → dotted key. */
  envKeys: Readonly<Record<string, string>>;
  /** The resolved default tree. */
  defaults: Record<string, unknown>;
}

const HEADER = ['| key | env | default | meaning |', '|---|---|---|---|'];

type Tree = Record<string, unknown>;

const isTree = (v: unknown): v is Tree => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The schema's defaults, as the loader resolves them with no environment and no config file. */
export function configDefaults(schema: ObjectSchema = configSchema): Tree {
  const { value, error } = schema.validate({ env: 'development' }, { convert: true, allowUnknown: false });
  if (error) throw new Error(`the config schema's defaults do not validate: ${error.message}`);
  return value as Tree;
}

/** Every leaf key below `d`, in declaration order, with its description. */
function leaves(d: Described, prefix: string): { key: string; description?: string }[] {
  return Object.entries(d.keys ?? {}).flatMap(([name, child]) => {
    const key = prefix ? `${prefix}.${name}` : name;
    return child.type === 'object' && child.keys ? leaves(child, key) : [{ key, description: child.flags?.description }];
  });
}

function at(tree: Tree, key: string): unknown {
  let node: unknown = tree;
  for (const k of key.split('.')) node = isTree(node) ? node[k] : undefined;
  return node;
}

export function configRows(sources: Partial<ConfigSources> = {}): ConfigRow[] {
  const { schema = configSchema, meanings = CONFIG_MEANINGS, envKeys = ENV_KEYS } = sources;
  const defaults = sources.defaults ?? configDefaults(schema);
  const envOf = new Map(Object.entries(envKeys).map(([name, key]) => [key, name]));
  return leaves(schema.describe() as Described, '').map(({ key, description }) => ({
    key,
    env: envOf.get(key) ?? null,
    default: at(defaults, key),
    meaning: description ?? meanings[key] ?? null,
  }));
}

/** Keys the table cannot explain: no description and no meaning entry. */
export function unexplainedKeys(rows: readonly ConfigRow[]): string[] {
  return rows.filter((r) => !r.meaning).map((r) => r.key);
}

/** Meaning entries that name no key of the schema (a key renamed or removed). */
export function strayMeanings(rows: readonly ConfigRow[], meanings: Readonly<Record<string, string>> = CONFIG_MEANINGS): string[] {
  const keys = new Set(rows.map((r) => r.key));
  return Object.keys(meanings).filter((k) => !keys.has(k));
}

const code = (s: string): string => `\`${s}\``;

/** A default as a table cell: scalars in code, lists of records by their ids or names. */
export function formatDefault(v: unknown): string {
  if (v === undefined) return 'none';
  if (v === '') return 'empty';
  if (Array.isArray(v)) {
    if (v.length === 0) return code('[]');
    const names = v.map((item) => (isTree(item) ? (item.id ?? item.name) : undefined));
    if (names.every((n) => typeof n === 'string')) return `${v.length} ${v.length === 1 ? 'entry' : 'entries'}: ${names.map((n) => code(n as string)).join(', ')}`;
    return code(JSON.stringify(v));
  }
  if (isTree(v)) return code(JSON.stringify(v));
  return code(String(v));
}

const cell = (s: string): string => s.replace(/\|/g, '\\|').replace(/\n/g, ' ');

/** The table for `rows`; throws naming the keys nothing documents. */
export function configTable(rows: readonly ConfigRow[]): string {
  const missing = unexplainedKeys(rows);
  if (missing.length) throw new Error(`no meaning for ${missing.join(', ')}: add a .description() to the key or an entry to src/docs/config-meanings.ts`);
  const lines = rows.map((r) => `| ${code(r.key)} | ${r.env ? code(r.env) : '–'} | ${cell(formatDefault(r.default))} | ${cell(r.meaning!)} |`);
  return [...HEADER, ...lines].join('\n');
}

/** The table between the markers of `text`, or null when it has no markers. */
export function configTableIn(text: string): string | null {
  return sectionIn(text, CONFIG_TABLE_MARKERS);
}

/** `text` with the table between its markers replaced. */
export function withConfigTable(text: string, table: string): string {
  return withSection(text, CONFIG_TABLE_MARKERS, table);
}
