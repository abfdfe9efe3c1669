import { createHash } from 'node:crypto'
import { JOB_VIEW_INCLUDE, toJobView, type JobView } from '@quire/core'
import { type Db, directQuery } from '@quire/db'
import { type ApiForm, type Bindings, type CandidateWebhook, formProfile, type StoredEvent } from '@quire/forms'
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
 * Most first attempts one delivery job carries. Each queue job costs the dispatcher about a millisecond of CPU (BullMQ's
 * moves to active and finished, their Redis round trips), which a group shares among its deliveries; the POSTs in
 * flight are bounded per process, not per job. A group still leaves the rest of a large fan-out in Redis, where other
 * dispatcher processes can take it.
 */
const DELIVERY_GROUP = 100

type DeliveryRow = { id: string; webhook_id: string; event_id: string; event_type: string; body: string }

type EventRow = {
  id: string
  workspace_id: string
  job_id: string | null
  document_id: string | null
  type: string
  stage: string | null
  transition: string | null
  data: Record<string, unknown> | null
  created_ms: number
  /** Null when the workspace is gone. */
  api_form: ApiForm | null
}
type WebhookRow = CandidateWebhook & { workspace_id: string }

/**
 * Turns internal events into deliveries: picks each event's receiving webhooks by its workspace's form profile, builds
 * each body once (retries resend it unchanged) and queues the first attempts, for all the events in one statement.
 * The reads are shared by the batch (one query per table, not per event).
 */
export async function fanoutEvents(
  deps: {
    db: Db
    publicUrl: string
    /**
     * The caller sends the first attempts' outbox rows to BullMQ itself (startDirectDispatch): the rows are written
     * with `dispatch_after` this far ahead, so the relay leaves them alone meanwhile and takes them over after it if
     * the caller never marks them (a crash, Redis refusing).
     */
    directGraceMs?: number
  },
  eventIds: readonly string[],
) {
  const { db } = deps
  const result: FanoutResult = { deliveries: new Map(eventIds.map((id) => [id, 0])), outboxRows: [] }
  // The reads and the write below go on the client's pg pool without Prisma (directQuery, prepared statements): a
  // fan-out is a handful of statements for up to 100 events, and Prisma's layer cost several times the driver's CPU on
  // each. `timestamp` columns hold UTC wall-clock values, so their epoch is read as UTC.
  const rows = (
    await directQuery<EventRow>(db, {
      name: 'quire_fanout_events',
      text: `
        SELECT e.id, e.workspace_id, e.job_id, e.document_id, e.type, e.stage, e.transition, e.data,
               (extract(epoch FROM e.created_at) * 1000)::float8 AS created_ms, ws.api_form::text AS api_form
        FROM events e LEFT JOIN workspaces ws ON ws.id = e.workspace_id
        WHERE e.id = ANY($1::text[]) AND e.fanned_out_at IS NULL`,
      values: [[...new Set(eventIds)]],
    })
  ).map((r) => ({
    event: {
      id: r.id,
      workspaceId: r.workspace_id,
      jobId: r.job_id,
      documentId: r.document_id,
      type: r.type,
      stage: r.stage,
      transition: r.transition,
      data: r.data ?? {},
      createdAt: new Date(Math.round(r.created_ms)),
    } satisfies StoredEvent,
    form: r.api_form,
  }))
  if (rows.length === 0) return result
  const workspaceIds = [...new Set(rows.map((r) => r.event.workspaceId))]
  const jobIds = [...new Set(rows.flatMap((r) => (r.event.jobId ? [r.event.jobId] : [])))]
  // Independent reads on pool connections (no transaction here): one round trip of waiting instead of two.
  const [webhooks, jobRows] = await Promise.all([
    directQuery<WebhookRow>(db, {
      name: 'quire_fanout_webhooks',
      text: 'SELECT id, workspace_id, events, status::text AS status FROM webhooks WHERE workspace_id = ANY($1::text[])',
      values: [workspaceIds],
    }),
    jobIds.length ? db.job.findMany({ where: { id: { in: jobIds } }, include: JOB_VIEW_INCLUDE }) : [],
  ])
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
  for (const { event, form } of rows) {
    if (!form) continue // the workspace was deleted meanwhile (its events with it)
    const job = event.jobId ? jobs.get(event.jobId) : undefined
    const view: JobView | null = job?.view ?? null
    const profile = formProfile(form)
    const candidates: CandidateWebhook[] = webhooks.filter((w) => w.workspace_id === event.workspaceId)
    for (const r of profile.recipients(event, job?.bindings ?? {}, candidates)) {
      const id = deliveryIdFor(event.id, r.webhookId, r.type)
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
        event_id: event.id,
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
  // writes nothing, nor does a webhook deleted since it was read (its row is locked against deletion while its
  // deliveries are written); a group none of whose events it marked is not queued (a group that also names such an
  // event finds its deliveries done or pending under their own jobs: an attempt is idempotent). Timestamps are UTC
  // wall-clock values, as Prisma writes them.
  const at = new Date().toISOString()
  const [written] = await directQuery<{ marked: string[]; queued: (Omit<OutboxRow, 'id'> & { id: number })[] }>(db, {
    name: 'quire_fanout_write',
    text: `
    WITH marked AS (
      UPDATE events SET fanned_out_at = $1::timestamp(3)
      WHERE id = ANY($2::text[]) AND fanned_out_at IS NULL RETURNING id
    ), delivered AS (
      INSERT INTO webhook_deliveries (id, webhook_id, event_id, event_type, body, created_at)
      SELECT d.id, d.webhook_id, d.event_id, d.event_type, d.body, $1::timestamp(3)
      FROM jsonb_to_recordset($3::jsonb)
        AS d(id text, webhook_id text, event_id text, event_type text, body text)
      JOIN marked ON marked.id = d.event_id
      JOIN webhooks w ON w.id = d.webhook_id
      FOR KEY SHARE OF w
      ON CONFLICT DO NOTHING
    ), queued AS (
      INSERT INTO outbox (queue, name, job_key, payload, priority, delay_ms, replace_finished, created_at,
                          dispatch_after)
      SELECT o.queue, o.name, o.job_key, o.payload, o.priority, o.delay_ms, o.replace_finished, $1::timestamp(3),
             $1::timestamp(3) + make_interval(secs => $5::float8 / 1000)
      FROM ROWS FROM (jsonb_to_recordset($4::jsonb) AS (
        queue text, name text, job_key text, payload jsonb, priority int, delay_ms int, replace_finished boolean,
        event_ids text[]))
        WITH ORDINALITY AS o(queue, name, job_key, payload, priority, delay_ms, replace_finished, event_ids, n)
      WHERE o.event_ids && ARRAY(SELECT id FROM marked)
      ORDER BY o.n
      RETURNING id, queue, name, job_key, payload, priority, delay_ms, replace_finished
    )
    SELECT ARRAY(SELECT id FROM marked) AS marked,
           coalesce((SELECT json_agg(q ORDER BY q.id) FROM queued q), '[]'::json) AS queued`,
    values: [
      at,
      rows.map((r) => r.event.id),
      JSON.stringify(deliveries),
      JSON.stringify(groups),
      // NULL: no dispatch_after, the relay sends the rows at its next pass.
      deps.directGraceMs ?? null,
    ],
  })
  const marked = new Set(written?.marked ?? [])
  for (const d of deliveries) {
    if (marked.has(d.event_id)) result.deliveries.set(d.event_id, (result.deliveries.get(d.event_id) ?? 0) + 1)
  }
  result.outboxRows = (written?.queued ?? []).map((q) => ({ ...q, id: BigInt(q.id) }))
  return result
}
