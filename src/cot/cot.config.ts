/** Config of the cot feature. Owned by that feature; composed into the one schema in src/config. */
import Joi from 'joi';
import type { FeatureConfig } from '../config/feature-config.js';

// eslint-disable-next-line @typescript-eslint/no-empty-object-type
export interface CotConfig {}

export const cotConfig: FeatureConfig = {
  key: 'cot',
  schema: Joi.object({}).default(),
  env: {},
};
