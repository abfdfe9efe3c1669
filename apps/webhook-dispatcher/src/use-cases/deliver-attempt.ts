import { newId } from '@quire/domain'
import type { Db } from '@quire/db'
import { DELIVERY_QUEUE, jobKeys, writeOutbox } from '@quire/queues'
import { DELIVERY_ID_HEADER, signFormA, signFormB, SIGNATURE_HEADER, TIMESTAMP_HEADER } from '@quire/signing'
import {
  buildAuthHeaders,
  deliverWebhook,
  formAShouldRetry,
  formBRetryDelayMs,
  WEBHOOK_USER_AGENT,
  type WebhookAuth,
} from '@quire/webhooks'
import type { Dispatcher } from 'undici'
import type { Logger } from 'pino'

export type DeliveryDeps = {
  db: Db
  log: Logger
  dispatcher: Dispatcher
  timeoutMs: number
  connectTimeoutMs: number
  formA: { baseMs: number; maxAttempts: number; giveUpMs: number }
  formBSchedule: number[]
  /** Called after a commit that queued work. */
  onCommit?: () => void
}

/**
 * One attempt of one delivery. The body is the one stored at fan-out; Form A signs it alone, Form B signs a fresh
 * timestamp plus the body on every attempt so receivers can enforce their age limit. The outcome and the next
 * attempt (if any) are recorded in PostgreSQL, so a dispatcher crash never loses a retry.
 */
export async function deliverAttempt(deps: DeliveryDeps, opts: { deliveryId: string; attempt: number }) {
  const { db } = deps
  const d = await db.webhookDelivery.findUnique({
    where: { id: opts.deliveryId },
    include: { webhook: { include: { workspace: true } } },
  })
  if (!d || d.status !== 'pending' || d.attempts >= opts.attempt) return 'skipped'
  const w = d.webhook
  const form = w.workspace.apiForm
  const auth = (w.auth as WebhookAuth | null) ?? { type: 'none' }
  const headers: Record<string, string> = {
    ...((w.headers as Record<string, string> | null) ?? {}),
    ...buildAuthHeaders(auth),
    'User-Agent': WEBHOOK_USER_AGENT,
    [DELIVERY_ID_HEADER]: d.id,
  }
  if (form === 'A') {
    headers[SIGNATURE_HEADER] = signFormA(w.secret, d.body)
  } else {
    const ts = Math.floor(Date.now() / 1000)
    headers[TIMESTAMP_HEADER] = String(ts)
    headers[SIGNATURE_HEADER] = signFormB(w.secret, ts, d.body)
  }
  const result = await deliverWebhook({
    url: w.url,
    body: d.body,
    headers,
    timeoutMs: deps.timeoutMs,
    connectTimeoutMs: deps.connectTimeoutMs,
    dispatcher: deps.dispatcher,
  })
  const now = new Date()
  let outcome = 'succeeded' as 'succeeded' | 'retrying' | 'abandoned'
  await db.$transaction(async (tx) => {
    await tx.deliveryAttempt.create({
      data: {
        id: newId('att'),
        deliveryId: d.id,
        attempt: opts.attempt,
        statusCode: result.statusCode ?? null,
        error: result.error ?? null,
        durationMs: Math.round(result.durationMs),
      },
    })
    if (result.ok) {
      await tx.webhookDelivery.update({
        where: { id: d.id },
        data: { status: 'succeeded', attempts: opts.attempt, completedAt: now, nextAttemptAt: null },
      })
      return
    }
    const delayMs =
      form === 'A'
        ? (() => {
            const decision = formAShouldRetry({ attemptsMade: opts.attempt, firstAttemptAt: d.createdAt, now, ...deps.formA })
            return decision.retry ? decision.delayMs : null
          })()
        : formBRetryDelayMs(opts.attempt, deps.formBSchedule)
    if (delayMs !== null) {
      outcome = 'retrying'
      await tx.webhookDelivery.update({
        where: { id: d.id },
        data: { attempts: opts.attempt, nextAttemptAt: new Date(now.getTime() + delayMs) },
      })
      await writeOutbox(tx, {
        queue: DELIVERY_QUEUE,
        name: 'deliver',
        jobKey: jobKeys.delivery(d.id, opts.attempt + 1),
        payload: { deliveryId: d.id, attempt: opts.attempt + 1 },
        delayMs,
      })
      return
    }
    outcome = 'abandoned'
    await tx.webhookDelivery.update({
      where: { id: d.id },
      data: { status: 'abandoned', attempts: opts.attempt, completedAt: now, nextAttemptAt: null },
    })
    if (form === 'B') {
      // Persistent failure: the endpoint is marked failing and the workspace's admins are told.
      await tx.webhook.update({ where: { id: w.id }, data: { status: 'failing' } })
      await tx.notification.create({
        data: {
          id: newId('ntf'),
          workspaceId: w.workspaceId,
          kind: 'webhook.failing',
          message: `Webhook "${w.name}" (${w.url}) failed ${opts.attempt} delivery attempts and is now failing.`,
          data: { webhook_id: w.id, delivery_id: d.id, last_error: result.error ?? null, last_status: result.statusCode ?? null },
        },
      })
    }
  })
  if (outcome === 'retrying') deps.onCommit?.()
  if (outcome === 'abandoned') {
    deps.log.warn({ deliveryId: d.id, webhookId: w.id, form, error: result.error }, 'webhook delivery abandoned')
  }
  return outcome
}
