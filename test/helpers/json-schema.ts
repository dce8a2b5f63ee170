/**
 * Validators for schemas read out of the served /openapi.json: Ajv on JSON Schema 2020-12 (the
 * dialect of OpenAPI 3.1) with its formats, so a test asks the document what it accepts.
 */
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import * as addFormatsModule from 'ajv-formats';

// ajv-formats is CommonJS: its default export arrives as the module object under some loaders
type AddFormats = (ajv: Ajv2020) => Ajv2020;
const addFormats = ((addFormatsModule as unknown as { default: { default?: AddFormats } & AddFormats }).default.default ?? (addFormatsModule as unknown as { default: AddFormats }).default) as AddFormats;

// an `anyOf` branch may require a key its parent declares (which of two body forms is present)
const ajv = new Ajv2020({ strict: true, strictRequired: false, allowUnionTypes: true, allErrors: true });
addFormats(ajv);

/** A validator of one document schema (compiled on every call: tests compile a handful). */
export function documentValidator(schema: object): ValidateFunction {
  return ajv.compile(schema);
}
