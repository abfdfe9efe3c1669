import { createHash } from 'node:crypto'
import { JOB_VIEW_INCLUDE, toJobView, type JobView } from '@quire/core'
import type { Db } from '@quire/db'
import { formProfile, type Bindings, type StoredEvent } from '@quire/forms'
import { deliveryOutboxRows } from '@quire/queues'

/** Same event, webhook and type → same delivery id, so a repeated fan-out creates nothing new. */
const deliveryIdFor = (eventId: string, webhookId: string, type: string) =>
  `dlv_${createHash('sha256').update(`${eventId}|${webhookId}|${type}`).digest('hex').slice(0, 24)}`

/**
 * Turns one internal event into deliveries: picks the receiving webhooks by the workspace's form profile, builds each
 * body once (retries resend it unchanged) and queues the first attempt, all in one transaction.
 */
export async function fanoutEvent(deps: { db: Db; publicUrl: string }, eventId: string): Promise<number> {
  const { db } = deps
  const row = await db.event.findUnique({ where: { id: eventId } })
  if (!row || row.fannedOutAt) return 0
  const event: StoredEvent = { ...row, data: (row.data as Record<string, unknown>) ?? {} }
  // Independent reads on pool connections (no transaction here): one round trip of waiting instead of three.
  const [workspace, webhooks, jobRow] = await Promise.all([
    db.workspace.findUniqueOrThrow({ where: { id: row.workspaceId } }),
    db.webhook.findMany({ where: { workspaceId: row.workspaceId } }),
    row.jobId ? db.job.findUnique({ where: { id: row.jobId }, include: JOB_VIEW_INCLUDE }) : null,
  ])
  let job: JobView | null = null
  let bindings: Bindings = {}
  if (jobRow) {
    job = toJobView(jobRow)
    bindings = ((jobRow.definition as { bindings?: Bindings }).bindings ?? {}) as Bindings
  }
  const profile = formProfile(workspace.apiForm)
  const recipients = profile.recipients(event, bindings, webhooks)
  const markFannedOut = { where: { id: row.id }, data: { fannedOutAt: new Date() } }
  if (recipients.length === 0) {
    await db.event.update(markFannedOut)
    return 0
  }
  const deliveries = recipients.map((r) => {
    const id = deliveryIdFor(row.id, r.webhookId, r.type)
    const payload = profile.buildPayload({
      deliveryId: id,
      type: r.type,
      event,
      job,
      webhookId: r.webhookId,
      baseUrl: deps.publicUrl,
    })
    return { id, webhookId: r.webhookId, eventId: row.id, eventType: r.type, body: JSON.stringify(payload) }
  })
  // The deliveries, the event's fan-out mark and the first attempts' outbox rows in one autocommit statement: as
  // atomic as an interactive transaction around the three writes, without its BEGIN and COMMIT round trips. An event
  // deleted meanwhile (retention) writes nothing. Timestamps are UTC wall-clock values, as Prisma writes them.
  const at = new Date().toISOString()
  const outboxRows = deliveryOutboxRows(deliveries.map((d) => ({ deliveryId: d.id, attempt: 1 })))
  await db.$executeRaw`
    WITH marked AS (
      UPDATE events SET fanned_out_at = ${at}::timestamp(3) WHERE id = ${row.id} RETURNING id
    ), delivered AS (
      INSERT INTO webhook_deliveries (id, webhook_id, event_id, event_type, body, created_at)
      SELECT d.id, d.webhook_id, d.event_id, d.event_type, d.body, ${at}::timestamp(3)
      FROM jsonb_to_recordset(${JSON.stringify(
        deliveries.map((d) => ({
          id: d.id,
          webhook_id: d.webhookId,
          event_id: d.eventId,
          event_type: d.eventType,
          body: d.body,
        })),
      )}::jsonb) AS d(id text, webhook_id text, event_id text, event_type text, body text), marked
      ON CONFLICT DO NOTHING
    )
    INSERT INTO outbox (queue, name, job_key, payload, priority, delay_ms, replace_finished, created_at)
    SELECT o.queue, o.name, o.job_key, o.payload, o.priority, o.delay_ms, o.replace_finished, ${at}::timestamp(3)
    FROM ROWS FROM (jsonb_to_recordset(${JSON.stringify(outboxRows)}::jsonb) AS (
      queue text, name text, job_key text, payload jsonb, priority int, delay_ms int, replace_finished boolean))
      WITH ORDINALITY AS o(queue, name, job_key, payload, priority, delay_ms, replace_finished, n), marked
    ORDER BY o.n`
  return deliveries.length
}
