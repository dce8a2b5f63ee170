/**
 * Ajv on JSON Schema 2020-12 (the dialect of OpenAPI 3.1) with ajv-formats: what the examples
 * generator and the tests validate documented schemas with. A development module: ajv is a
 * devDependency, so nothing the service runs imports this.
 */
import { Ajv2020, type Options } from 'ajv/dist/2020.js';
import * as addFormatsModule from 'ajv-formats';

// ajv-formats is CommonJS: its default export arrives as the module object under some loaders
type AddFormats = (ajv: Ajv2020) => Ajv2020;
const addFormats = ((addFormatsModule as unknown as { default: { default?: AddFormats } & AddFormats }).default.default ?? (addFormatsModule as unknown as { default: AddFormats }).default) as AddFormats;

/** A 2020-12 Ajv with the standard formats (date-time, uri, …) and union types allowed. */
export function newAjv(options: Options = {}): Ajv2020 {
  return addFormats(new Ajv2020({ allowUnionTypes: true, ...options }));
}
