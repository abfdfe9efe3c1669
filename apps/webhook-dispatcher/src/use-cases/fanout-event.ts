import { createHash } from 'node:crypto'
import { JOB_VIEW_INCLUDE, toJobView, type JobView } from '@quire/core'
import type { Db } from '@quire/db'
import { formProfile, type Bindings, type StoredEvent } from '@quire/forms'
import { outbox } from '@quire/queues'

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
  const workspace = await db.workspace.findUniqueOrThrow({ where: { id: row.workspaceId } })
  const webhooks = await db.webhook.findMany({ where: { workspaceId: row.workspaceId } })
  let job: JobView | null = null
  let bindings: Bindings = {}
  if (row.jobId) {
    const jobRow = await db.job.findUnique({ where: { id: row.jobId }, include: JOB_VIEW_INCLUDE })
    if (jobRow) {
      job = toJobView(jobRow)
      bindings = ((jobRow.definition as { bindings?: Bindings }).bindings ?? {}) as Bindings
    }
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
  await db.$transaction(async (tx) => {
    await tx.webhookDelivery.createMany({ data: deliveries, skipDuplicates: true })
    await tx.event.update(markFannedOut)
    await outbox.delivery(
      tx,
      deliveries.map((d) => ({ deliveryId: d.id, attempt: 1 })),
    )
  })
  return deliveries.length
}
