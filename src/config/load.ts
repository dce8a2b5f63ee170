/**
 * Config = the joi schemas' defaults, under config/<env>.json, under environment variables, under
 * explicit overrides (tests). Validated once by the joi schema and frozen; a bad value stops start-up with
 * a message naming the key and its source.
 */
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { FEATURE_CONFIGS, configSchema, type Config } from './schema.js';
import { ServiceError } from '../lib/service-error.js';

/** Environment variable → config key. README's configuration table lists the same pairs. */
const CORE_ENV_KEYS: Readonly<Record<string, string>> = {
  NODE_ENV: 'env',
  PORT: 'server.port',
  HOST: 'server.host',
  SVC_PUBLIC_BASE_URL: 'server.publicBaseUrl',
  SVC_SHUTDOWN_TIMEOUT_MS: 'server.shutdownTimeoutMs',
  LOG_LEVEL: 'log.level',
  SVC_JSON_LIMIT_BYTES: 'http.jsonLimitBytes',
  SVC_XML_LIMIT_BYTES: 'http.xmlLimitBytes',
  SVC_POOL_THREADS: 'pool.threads',
  SVC_POOL_MAX_QUEUE: 'pool.maxQueue',
  SVC_KERNEL_DEADLINE_MS: 'pool.taskDeadlineMs',
  SVC_POOL_NICE_INCREMENT: 'pool.niceIncrement',
  SVC_POOL_MAX_OLD_GENERATION_SIZE_MB: 'pool.maxOldGenerationSizeMb',
  SVC_POOL_WARMUP: 'pool.warmup',
  SVC_POOL_WARMUP_PASSES: 'pool.warmupPasses',
};

export const ENV_KEYS: Readonly<Record<string, string>> = {
  ...CORE_ENV_KEYS,
  ...Object.fromEntries(FEATURE_CONFIGS.flatMap((f) => Object.entries(f.env).map(([name, key]) => [name, `${f.key}.${key}`]))),
};

export class ConfigError extends ServiceError {
  readonly code = 'SVC_CONFIG_INVALID';
}

type Tree = Record<string, unknown>;

export function projectRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  while (!(existsSync(join(dir, 'package.json')) && existsSync(join(dir, 'config')))) {
    const up = dirname(dir);
    if (up === dir) throw new ConfigError('no package.json beside a config/ directory above ' + fileURLToPath(import.meta.url));
    dir = up;
  }
  return dir;
}

/** A JSON file of the project (package.json, a committed generated file), by its path from the root. */
export function projectJson<T>(file: string): T {
  return JSON.parse(readFileSync(join(projectRoot(), file), 'utf8')) as T;
}

function readJson(path: string): Tree {
  try {
    return JSON.parse(readFileSync(path, 'utf8')) as Tree;
  } catch (err) {
    throw new ConfigError(`cannot read ${path}: ${(err as Error).message}`);
  }
}

function isTree(v: unknown): v is Tree {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

export function deepMerge(base: Tree, over: Tree): Tree {
  const out: Tree = { ...base };
  for (const [k, v] of Object.entries(over)) out[k] = isTree(v) && isTree(out[k]) ? deepMerge(out[k] as Tree, v) : v;
  return out;
}

function setPath(tree: Tree, path: string, value: unknown): void {
  const keys = path.split('.');
  let node = tree;
  for (const k of keys.slice(0, -1)) {
    if (!isTree(node[k])) node[k] = {};
    node = node[k] as Tree;
  }
  node[keys.at(-1)!] = value;
}

function deepFreeze<T>(value: T): T {
  if (isTree(value) || Array.isArray(value)) {
    for (const v of Object.values(value)) deepFreeze(v);
    Object.freeze(value);
  }
  return value;
}

export interface LoadOptions {
  env?: NodeJS.ProcessEnv;
  overrides?: Tree;
}

export function loadConfig({ env = process.env, overrides = {} }: LoadOptions = {}): Readonly<Config> {
  const root = projectRoot();
  const envName = env.NODE_ENV ?? 'development';
  const envFile = join(root, 'config', `${envName}.json`);
  let tree: Tree = existsSync(envFile) ? readJson(envFile) : {};
  tree.env = envName;
  for (const [name, key] of Object.entries(ENV_KEYS)) {
    const raw = env[name];
    if (raw !== undefined && raw !== '' && name !== 'NODE_ENV') setPath(tree, key, raw);
  }
  tree = deepMerge(tree, overrides);
  const { value, error } = configSchema.validate(tree, { abortEarly: false, convert: true, allowUnknown: false });
  if (error) {
    const reasons = error.details.map((d) => {
      const key = d.path.join('.');
      const envName = Object.entries(ENV_KEYS).find(([, k]) => k === key)?.[0];
      return `${key}${envName ? ` (env ${envName})` : ''}: ${d.message.replace(/^"[^"]*" /, '')}`;
    });
    throw new ConfigError(`invalid configuration: ${reasons.join('; ')}`);
  }
  return deepFreeze(value);
}
