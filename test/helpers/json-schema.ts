/**
 * Validators for schemas read out of the served /openapi.json: Ajv on JSON Schema 2020-12 (the
 * dialect of OpenAPI 3.1) with its formats, so a test asks the document what it accepts.
 */
import type { ValidateFunction } from 'ajv/dist/2020.js';
import { newAjv } from '../../src/docs/ajv.js';


// an `anyOf` branch may require a key its parent declares (which of two body forms is present)
const ajv = newAjv({ strict: true, strictRequired: false, allErrors: true });

const COMPONENT_REF = '"#/components/schemas/';

/**
 * A validator of one document schema (compiled on every call: tests compile a handful). A schema
 * that refers to the document's named schemas is handed them (`components.schemas`): they are
 * put under its own `$defs` and its references pointed there, so it compiles standing alone.
 */
export function documentValidator(schema: object, components: Readonly<Record<string, unknown>> = {}): ValidateFunction {
  const text = JSON.stringify(schema);
  if (!text.includes(COMPONENT_REF)) return ajv.compile(schema);
  const local = (value: unknown): unknown => JSON.parse(JSON.stringify(value).replaceAll(COMPONENT_REF, '"#/$defs/'));
  return ajv.compile({ ...(local(schema) as object), $defs: local(components) });
}
