import { createHash } from 'node:crypto'
import { JOB_VIEW_INCLUDE, toJobView, type JobView } from '@quire/core'
import type { Db } from '@quire/db'
import { formProfile, type Bindings, type StoredEvent } from '@quire/forms'
import { deliveryOutboxRows, type OutboxRow, type OutboxRowValues } from '@quire/queues'

/** Same event, webhook and type → same delivery id, so a repeated fan-out creates nothing new. */
const deliveryIdFor = (eventId: string, webhookId: string, type: string) =>
  `dlv_${createHash('sha256').update(`${eventId}|${webhookId}|${type}`).digest('hex').slice(0, 24)}`

export type FanoutResult = {
  /** Deliveries made per event id asked for (0 for an event already fanned out, deleted or with no recipient). */
  deliveries: Map<string, number>
  /** The first attempts' outbox rows (one per group of deliveries), committed: the caller sends them to BullMQ. */
  outboxRows: OutboxRow[]
}

/**
 * Most first attempts one delivery job carries. The POSTs in flight are bounded per process, not per job; a small
 * group leaves the rest of a large fan-out in Redis, where other dispatcher processes can take it.
 */
const DELIVERY_GROUP = 20

type DeliveryRow = { id: string; webhook_id: string; event_id: string; event_type: string; body: string }

/**
 * Turns internal events into deliveries: picks each event's receiving webhooks by its workspace's form profile, builds
 * each body once (retries resend it unchanged) and queues the first attempts, for all the events in one statement.
 * The reads are shared by the batch (one query per table, not per event).
 */
export async function fanoutEvents(deps: { db: Db; publicUrl: string }, eventIds: readonly string[]) {
  const { db } = deps
  const result: FanoutResult = { deliveries: new Map(eventIds.map((id) => [id, 0])), outboxRows: [] }
  const rows = (await db.event.findMany({ where: { id: { in: [...new Set(eventIds)] } } })).filter(
    (r) => !r.fannedOutAt,
  )
  if (rows.length === 0) return result
  const workspaceIds = [...new Set(rows.map((r) => r.workspaceId))]
  const jobIds = [...new Set(rows.flatMap((r) => (r.jobId ? [r.jobId] : [])))]
  // Independent reads on pool connections (no transaction here): one round trip of waiting instead of three.
  const [workspaces, webhooks, jobRows] = await Promise.all([
    db.workspace.findMany({ where: { id: { in: workspaceIds } }, select: { id: true, apiForm: true } }),
    db.webhook.findMany({ where: { workspaceId: { in: workspaceIds } } }),
    jobIds.length ? db.job.findMany({ where: { id: { in: jobIds } }, include: JOB_VIEW_INCLUDE }) : [],
  ])
  const formOf = new Map(workspaces.map((w) => [w.id, w.apiForm]))
  const jobs = new Map(
    jobRows.map((j) => [
      j.id,
      {
        view: toJobView(j),
        bindings: ((j.definition as { bindings?: Bindings } | null)?.bindings ?? {}) as Bindings,
      },
    ]),
  )
  const deliveries: DeliveryRow[] = []
  for (const row of rows) {
    const form = formOf.get(row.workspaceId)
    if (!form) continue // the workspace was deleted meanwhile (its events with it)
    const event: StoredEvent = { ...row, data: (row.data as Record<string, unknown>) ?? {} }
    const job = row.jobId ? jobs.get(row.jobId) : undefined
    const view: JobView | null = job?.view ?? null
    const profile = formProfile(form)
    const candidates = webhooks.filter((w) => w.workspaceId === row.workspaceId)
    for (const r of profile.recipients(event, job?.bindings ?? {}, candidates)) {
      const id = deliveryIdFor(row.id, r.webhookId, r.type)
      const payload = profile.buildPayload({
        deliveryId: id,
        type: r.type,
        event,
        job: view,
        webhookId: r.webhookId,
        baseUrl: deps.publicUrl,
      })
      deliveries.push({
        id,
        webhook_id: r.webhookId,
        event_id: row.id,
        event_type: r.type,
        body: JSON.stringify(payload),
      })
    }
  }
  // The first attempts as a few jobs of up to DELIVERY_GROUP deliveries each (every queue job costs Redis round trips);
  // a group names the events whose deliveries it carries.
  const groups: (OutboxRowValues & { event_ids: string[] })[] = []
  for (let i = 0; i < deliveries.length; i += DELIVERY_GROUP) {
    const members = deliveries.slice(i, i + DELIVERY_GROUP)
    const [row] = deliveryOutboxRows([{ deliveryIds: members.map((d) => d.id), attempt: 1 }])
    groups.push({ ...row!, event_ids: [...new Set(members.map((d) => d.event_id))] })
  }
  // The events' fan-out marks, their deliveries and the first attempts' outbox rows in one autocommit statement: as
  // atomic as an interactive transaction around the three writes, without its BEGIN and COMMIT round trips. Only
  // events this statement marks get deliveries: one deleted meanwhile (retention) or fanned out by a concurrent run
  // writes nothing, and a group none of whose events it marked is not queued (a group that also names such an event
  // finds its deliveries done or pending under their own jobs: an attempt is idempotent). Timestamps are UTC
  // wall-clock values, as Prisma writes them.
  const at = new Date().toISOString()
  const [written] = await db.$queryRaw<{ marked: string[]; queued: (Omit<OutboxRow, 'id'> & { id: number })[] }[]>`
    WITH marked AS (
      UPDATE events SET fanned_out_at = ${at}::timestamp(3)
      WHERE id = ANY(${rows.map((r) => r.id)}::text[]) AND fanned_out_at IS NULL RETURNING id
    ), delivered AS (
      INSERT INTO webhook_deliveries (id, webhook_id, event_id, event_type, body, created_at)
      SELECT d.id, d.webhook_id, d.event_id, d.event_type, d.body, ${at}::timestamp(3)
      FROM jsonb_to_recordset(${JSON.stringify(deliveries)}::jsonb)
        AS d(id text, webhook_id text, event_id text, event_type text, body text)
      JOIN marked ON marked.id = d.event_id
      ON CONFLICT DO NOTHING
    ), queued AS (
      INSERT INTO outbox (queue, name, job_key, payload, priority, delay_ms, replace_finished, created_at)
      SELECT o.queue, o.name, o.job_key, o.payload, o.priority, o.delay_ms, o.replace_finished, ${at}::timestamp(3)
      FROM ROWS FROM (jsonb_to_recordset(${JSON.stringify(groups)}::jsonb) AS (
        queue text, name text, job_key text, payload jsonb, priority int, delay_ms int, replace_finished boolean,
        event_ids text[]))
        WITH ORDINALITY AS o(queue, name, job_key, payload, priority, delay_ms, replace_finished, event_ids, n)
      WHERE o.event_ids && ARRAY(SELECT id FROM marked)
      ORDER BY o.n
      RETURNING id, queue, name, job_key, payload, priority, delay_ms, replace_finished
    )
    SELECT ARRAY(SELECT id FROM marked) AS marked,
           coalesce((SELECT json_agg(q ORDER BY q.id) FROM queued q), '[]'::json) AS queued`
  const marked = new Set(written?.marked ?? [])
  for (const d of deliveries) {
    if (marked.has(d.event_id)) result.deliveries.set(d.event_id, (result.deliveries.get(d.event_id) ?? 0) + 1)
  }
  result.outboxRows = (written?.queued ?? []).map((q) => ({ ...q, id: BigInt(q.id) }))
  return result
}
