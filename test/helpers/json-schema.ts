/**
 * Validators for schemas read out of the served /openapi.json: Ajv on JSON Schema 2020-12 (the
 * dialect of OpenAPI 3.1) with its formats, so a test asks the document what it accepts.
 */
import type { ValidateFunction } from 'ajv/dist/2020.js';
import { newAjv } from '../../src/docs/ajv.js';


// an `anyOf` branch may require a key its parent declares (which of two body forms is present)
const ajv = newAjv({ strict: true, strictRequired: false, allErrors: true });

/** A validator of one document schema (compiled on every call: tests compile a handful). */
export function documentValidator(schema: object): ValidateFunction {
  return ajv.compile(schema);
}
