/**
 * pino `redact` paths for every field that can carry a webhook secret or receiver credential, in the shapes Quire
 * handles (request bodies of both forms, webhook rows and views, auth objects, outgoing headers). Apps that handle
 * webhooks pass `{ redact: { paths: SECRET_LOG_REDACT_PATHS, censor: '[redacted]' } }` to pino.
 */
const FIELDS = ['secret', 'hmac_secret', 'password', 'api_key', 'apiKey', 'authorization', 'Authorization']
const NESTED = ['auth.key', 'apikey.key']

export const SECRET_LOG_REDACT_PATHS: string[] = [
  ...FIELDS.flatMap((f) => [f, `*.${f}`, `*.*.${f}`]),
  ...NESTED.flatMap((f) => [f, `*.${f}`, `*.*.${f}`]),
]
