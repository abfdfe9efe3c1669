import path from 'node:path'
import type { DestinationsConfig } from '@quire/storage'
import { z } from 'zod'
import { bothKeysOrNone, parseJsonEnv, S3_CONNECTION_FIELDS, s3Connection } from './s3-env.ts'

/** Where results go besides the job itself (DESIGN, `QUIRE_DESTINATIONS`), for the stage worker. */
export const DestinationsEnv = z.object({
  /** JSON `{"<name>": {"type": "dir", "path": "..."} | {"type": "s3", "bucket", "prefix", "endpoint", "region"}}`. */
  QUIRE_DESTINATIONS: z.string().default('{}'),
})
export type DestinationsEnv = z.infer<typeof DestinationsEnv>

const Destination = z.discriminatedUnion('type', [
  z.strictObject({ type: z.literal('dir'), path: z.string().min(1) }),
  z
    .strictObject({ type: z.literal('s3'), ...S3_CONNECTION_FIELDS, prefix: z.string().optional() })
    .refine(bothKeysOrNone.check, { message: bothKeysOrNone.message }),
])
const Destinations = z.record(
  z.string().regex(/^[A-Za-z0-9._-]{1,63}$/, 'a name of 1-63 letters, digits, . _ -'),
  Destination,
)

/** Parses `QUIRE_DESTINATIONS`; a bad value throws a ConfigError naming the entry, so the process stops at start. */
export function destinationsConfig(env: DestinationsEnv): DestinationsConfig {
  const parsed = parseJsonEnv('QUIRE_DESTINATIONS', env.QUIRE_DESTINATIONS.trim() || '{}', Destinations)
  return Object.fromEntries(
    Object.entries(parsed).map(([name, d]) => [
      name,
      d.type === 'dir'
        ? { type: 'dir', path: path.resolve(d.path) }
        : { type: 's3', ...s3Connection(d), prefix: d.prefix },
    ]),
  ) as DestinationsConfig
}
