import { z } from 'zod'
import { ConfigError } from './env.ts'

/** The S3 connection fields every S3 setting takes (QUIRE_BUCKETS entries, QUIRE_BLOB_S3). */
export const S3_CONNECTION_FIELDS = {
  bucket: z.string().min(1),
  region: z.string().min(1).default('us-east-1'),
  endpoint: z.url({ protocol: /^https?$/ }).optional(),
  force_path_style: z.boolean().default(false),
  access_key_id: z.string().min(1).optional(),
  secret_access_key: z.string().min(1).optional(),
  session_token: z.string().min(1).optional(),
}

type S3ConnectionInput = {
  bucket: string
  region: string
  endpoint?: string
  force_path_style: boolean
  access_key_id?: string
  secret_access_key?: string
  session_token?: string
}

export const bothKeysOrNone = {
  check: (b: { access_key_id?: string; secret_access_key?: string }) =>
    (b.access_key_id === undefined) === (b.secret_access_key === undefined),
  message: 'give both access_key_id and secret_access_key, or neither (the AWS default credential chain)',
}

/** Snake-case settings → the shape @quire/storage's S3 clients take. */
export function s3Connection(b: S3ConnectionInput) {
  return {
    bucket: b.bucket,
    region: b.region,
    endpoint: b.endpoint,
    forcePathStyle: b.force_path_style,
    credentials:
      b.access_key_id && b.secret_access_key
        ? { accessKeyId: b.access_key_id, secretAccessKey: b.secret_access_key, sessionToken: b.session_token }
        : undefined,
  }
}

/** Parses a variable holding JSON with a schema; a bad value throws a ConfigError naming the variable and each problem. */
export function parseJsonEnv<S extends z.ZodType>(name: string, raw: string, schema: S): z.infer<S> {
  let json: unknown
  try {
    json = JSON.parse(raw)
  } catch (err) {
    throw new ConfigError(`${name} is not valid JSON: ${(err as Error).message}`)
  }
  const r = schema.safeParse(json)
  if (!r.success) {
    const issues = r.error.issues.map((i) => `${i.path.length ? i.path.join('.') : '(root)'}: ${i.message}`)
    throw new ConfigError(`${name} is invalid: ${issues.join('; ')}`)
  }
  return r.data
}
