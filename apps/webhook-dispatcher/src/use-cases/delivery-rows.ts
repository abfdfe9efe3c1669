import { newId } from '@quire/domain'
import { type Db, directQuery } from '@quire/db'
import type { ApiForm } from '@quire/forms'
import { dependencyDown } from '@quire/runtime'
import type { WebhookAuth } from '@quire/webhooks'
import { coalesce } from '../batching/coalesce.ts'

/** What one attempt needs of its delivery, its webhook and the workspace's form, read in one query. */
export type LoadedDelivery = {
  id: string
  status: string
  attempts: number
  body: string
  createdAt: Date
  webhook: {
    id: string
    workspaceId: string
    name: string
    url: string
    /** Sealed. */
    secret: string
    headers: Record<string, string> | null
    /** Credentials sealed. */
    auth: WebhookAuth | null
    apiForm: ApiForm
    /** `failing` once a delivery was abandoned under a form that marks it so (until re-enabled). */
    status: string
  }
}

type LoadedRow = {
  id: string
  status: string
  attempts: number
  body: string
  created_ms: number
  webhook_id: string
  workspace_id: string
  name: string
  url: string
  secret: string
  headers: Record<string, string> | null
  auth: WebhookAuth | null
  api_form: ApiForm
  webhook_status: string
}

/** Deliveries by id with their webhooks and forms; ids not found are absent from the map. */
export async function loadDeliveries(db: Db, ids: readonly string[]): Promise<Map<string, LoadedDelivery>> {
  // Sent on the client's pg pool without Prisma (directQuery; a prepared statement per connection): every attempt
  // passes here, and Prisma's layer costs several times the driver's CPU per statement. `timestamp` columns hold UTC
  // wall-clock values, so their epoch is read as UTC.
  const rows = await directQuery<LoadedRow>(db, {
    name: 'quire_dispatcher_load_deliveries',
    text: `
      SELECT d.id, d.status::text AS status, d.attempts, d.body,
             (extract(epoch FROM d.created_at) * 1000)::float8 AS created_ms,
             w.id AS webhook_id, w.workspace_id, w.name, w.url, w.secret, w.headers, w.auth, ws.api_form::text AS api_form,
             w.status::text AS webhook_status
      FROM webhook_deliveries d
      JOIN webhooks w ON w.id = d.webhook_id
      JOIN workspaces ws ON ws.id = w.workspace_id
      WHERE d.id = ANY($1::text[])`,
    values: [[...new Set(ids)]],
  })
  return new Map(
    rows.map((r) => [
      r.id,
      {
        id: r.id,
        status: r.status,
        attempts: r.attempts,
        body: r.body,
        createdAt: new Date(Math.round(r.created_ms)),
        webhook: {
          id: r.webhook_id,
          workspaceId: r.workspace_id,
          name: r.name,
          url: r.url,
          secret: r.secret,
          headers: r.headers,
          auth: r.auth,
          apiForm: r.api_form,
          status: r.webhook_status,
        },
      },
    ]),
  )
}

/** A 2xx answer to record: the attempt row and the delivery's completion. */
export type SuccessRecord = {
  deliveryId: string
  attempt: number
  statusCode: number | null
  durationMs: number
  at: Date
}

/**
 * Records successful attempts, each atomically with its delivery's completion, all in one autocommit statement (an
 * interactive transaction would cost BEGIN and COMMIT round trips around the same writes), sent without Prisma as
 * loadDeliveries is. An attempt already recorded (a redelivered job racing the first), or of a delivery whose
 * webhook was deleted meanwhile (its row is locked against deletion while the attempt is written, so one gone never
 * fails the others of the batch), writes nothing and is left out of the returned ids. Timestamps are UTC wall-clock
 * values in `timestamp` columns, as Prisma writes them.
 */
export async function recordSuccesses(db: Db, list: readonly SuccessRecord[]): Promise<Set<string>> {
  const values = list.map((s) => ({
    id: newId('att'),
    delivery_id: s.deliveryId,
    attempt: s.attempt,
    status_code: s.statusCode,
    duration_ms: Math.round(s.durationMs),
    at: s.at.toISOString(),
  }))
  const done = await directQuery<{ id: string }>(db, {
    name: 'quire_dispatcher_record_successes',
    text: `
      WITH v AS (
        SELECT * FROM jsonb_to_recordset($1::jsonb)
          AS v(id text, delivery_id text, attempt int, status_code int, duration_ms int, at timestamp(3))
      ), attempt AS (
        INSERT INTO delivery_attempts (id, delivery_id, attempt, status_code, error, duration_ms, created_at)
        SELECT v.id, v.delivery_id, v.attempt, v.status_code, NULL, v.duration_ms, v.at
        FROM v JOIN webhook_deliveries live ON live.id = v.delivery_id
        FOR KEY SHARE OF live
        ON CONFLICT (delivery_id, attempt) DO NOTHING
        RETURNING delivery_id, attempt
      )
      UPDATE webhook_deliveries d
      SET status = 'succeeded', attempts = v.attempt, completed_at = v.at, next_attempt_at = NULL
      FROM attempt a JOIN v ON v.delivery_id = a.delivery_id AND v.attempt = a.attempt
      WHERE d.id = a.delivery_id
      RETURNING d.id`,
    values: [JSON.stringify(values)],
  })
  return new Set(done.map((r) => r.id))
}

/** Loads and success records shared by the attempts running at the same moment (see coalesce). */
export type DeliveryBatching = {
  load(deliveryId: string): Promise<LoadedDelivery | null>
  /** True when recorded; false when the attempt was already recorded. */
  recordSuccess(s: SuccessRecord): Promise<boolean>
}

/** Most deliveries one statement reads or records. */
const DELIVERY_BATCH = 200

/**
 * Success records start a statement at most this often (coalesce's window). POSTs finish one by one, so without a
 * window a statement records the few that finished while the one before it ran; with it, one statement (one commit)
 * records what finished in the window, tens of deliveries under load. Until its statement commits, an attempt's job is
 * not finished: a crash meanwhile only means the delivery is sent again, under the same delivery id.
 */
const RECORD_WINDOW_MS = 10

export function createDeliveryBatching(db: Db): DeliveryBatching {
  const load = coalesce(
    async (ids: readonly string[]) => {
      const found = await loadDeliveries(db, ids)
      return ids.map((id) => found.get(id) ?? null)
    },
    { maxBatch: DELIVERY_BATCH },
  )
  const record = coalesce(
    async (list: readonly SuccessRecord[]): Promise<({ recorded: boolean } | { error: unknown })[]> => {
      try {
        const done = await recordSuccesses(db, list)
        return list.map((s) => ({ recorded: done.has(s.deliveryId) }))
      } catch (err) {
        if (list.length === 1 || dependencyDown(err)) throw err
        // One bad row (its delivery deleted meanwhile) must not fail the others' records: each alone.
        return Promise.all(
          list.map(async (s) => {
            try {
              return { recorded: (await recordSuccesses(db, [s])).has(s.deliveryId) }
            } catch (error) {
              return { error }
            }
          }),
        )
      }
    },
    { maxBatch: DELIVERY_BATCH, windowMs: RECORD_WINDOW_MS },
  )
  return {
    load,
    async recordSuccess(s) {
      const outcome = await record(s)
      if ('error' in outcome) throw outcome.error
      return outcome.recorded
    },
  }
}
