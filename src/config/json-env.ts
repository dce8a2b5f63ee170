/**
 * A config list that an environment variable can set as JSON text: the schema accepts the list
 * itself (from config/<env>.json) or a string holding it, parsed and validated by the same rules.
 */
import Joi from 'joi';

export function listOrJson(list: Joi.ArraySchema, what: string): Joi.AlternativesSchema {
  const parse = (value: string, helpers: Joi.CustomHelpers): unknown => {
    let parsed: unknown;
    try {
      parsed = JSON.parse(value);
    } catch (err) {
      return helpers.message({ custom: `must be a JSON list of ${what} (${(err as Error).message})` });
    }
    const { value: items, error } = list.validate(parsed);
    if (error) return helpers.message({ custom: `must be a JSON list of ${what} (${error.message})` });
    return items;
  };
  return Joi.alternatives().try(list, Joi.string().custom(parse));
}
