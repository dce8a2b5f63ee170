/**
 * `npm run docs:config`: rewrites the configuration table of docs/configuration.md between its
 * markers from the config schemas (src/docs/config-table.ts).
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { projectRoot } from '../config/load.js';
import { CONFIG_TABLE_FILE, configRows, configTable, withConfigTable } from './config-table.js';

const file = join(projectRoot(), CONFIG_TABLE_FILE);
const rows = configRows();
writeFileSync(file, withConfigTable(readFileSync(file, 'utf8'), configTable(rows)));
console.log(`configuration table: ${rows.length} keys written to ${CONFIG_TABLE_FILE}`);
