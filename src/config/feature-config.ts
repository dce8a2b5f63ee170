/** A feature's slice of the config: its key, joi schema (defaults included) and env variables. */
import type { ObjectSchema } from 'joi';

export interface FeatureConfig {
  /** Top-level config key, e.g. `adsb`. */
  key: string;
  schema: ObjectSchema;
  /** Environment variable → dotted config key (under this feature's key). */
  env: Record<string, string>;
}
