import { z } from 'zod';
import type { JsonValue } from './json.js';

/** JSON values as a schema: recursive, so its type is the one declared by hand (engine/json.ts). */
export const jsonValueSchema: z.ZodType<JsonValue> = z
  .lazy(() => z.union([z.string(), z.number(), z.boolean(), z.null(), z.array(jsonValueSchema), z.record(z.string(), jsonValueSchema)]))
  .register(z.globalRegistry, { id: 'JsonValue' });

export const jsonObjectSchema = z.record(z.string(), jsonValueSchema);
