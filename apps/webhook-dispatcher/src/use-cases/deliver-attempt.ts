import { newId } from '@quire/domain'
import type { Db } from '@quire/db'
import { outbox } from '@quire/queues'
import { formProfile, type RetrySettings } from '@quire/forms'
import { DELIVERY_ID_HEADER } from '@quire/signing'
import type { SecretBox } from '@quire/secrets'
import { buildAuthHeaders, deliverWebhook, openWebhookAuth, WEBHOOK_USER_AGENT } from '@quire/webhooks'
import type { Dispatcher } from 'undici'
import type { Logger } from 'pino'
import { type DeliveryBatching, loadDeliveries, recordSuccesses } from './delivery-rows.ts'

export type DeliveryDeps = {
  db: Db
  /** Opens the webhook's signing secret and receiver credential, stored sealed. */
  secrets: Pick<SecretBox, 'open'>
  log: Logger
  dispatcher: Dispatcher
  timeoutMs: number
  connectTimeoutMs: number
  retry: RetrySettings
  /** Called after a commit that queued work. */
  onCommit?: () => void
  /**
   * Shares the reads and success records of attempts running at the same moment (createDeliveryBatching); without it
   * each attempt has statements of its own.
   */
  batching?: DeliveryBatching
  /** Bounds the POSTs in flight across attempts (limitConcurrency); without it each attempt posts at once. */
  inFlight?: <T>(post: () => Promise<T>) => Promise<T>
}

/**
 * One attempt of one delivery. The body is the one stored at fan-out; the workspace's form profile signs each attempt
 * (a form that signs time gets a fresh timestamp every attempt, so receivers can enforce their age limit), decides the
 * next wait and what abandoning does. The outcome and the next attempt (if any) are recorded in PostgreSQL, so a
 * dispatcher crash never loses a retry.
 */
export async function deliverAttempt(deps: DeliveryDeps, opts: { deliveryId: string; attempt: number }) {
  const { db } = deps
  const d = deps.batching
    ? await deps.batching.load(opts.deliveryId)
    : ((await loadDeliveries(db, [opts.deliveryId])).get(opts.deliveryId) ?? null)
  if (d?.status !== 'pending' || d.attempts >= opts.attempt) return 'skipped'
  const w = d.webhook
  if (w.status === 'failing') {
    // README: "a `failing` webhook receives nothing until re-enabled": its deliveries still pending (fanned out
    // before it failed, or retrying) end here unsent, without another notification.
    await db.webhookDelivery.updateMany({
      where: { id: d.id, status: 'pending' },
      data: { status: 'abandoned', completedAt: new Date(), nextAttemptAt: null },
    })
    return 'abandoned'
  }
  const profile = formProfile(w.apiForm)
  const auth = openWebhookAuth(w.auth ?? { type: 'none' }, deps.secrets)
  const secret = deps.secrets.open(w.secret)
  // Signed once the POST has its slot, not before: a form that signs time must not send a timestamp that aged while
  // the attempt waited its turn.
  const post = () =>
    deliverWebhook({
      url: w.url,
      body: d.body,
      headers: {
        ...(w.headers ?? {}),
        ...buildAuthHeaders(auth),
        'User-Agent': WEBHOOK_USER_AGENT,
        [DELIVERY_ID_HEADER]: d.id,
        ...profile.signatureHeaders(secret, d.body, Math.floor(Date.now() / 1000)),
      },
      timeoutMs: deps.timeoutMs,
      connectTimeoutMs: deps.connectTimeoutMs,
      dispatcher: deps.dispatcher,
    })
  const result = await (deps.inFlight ? deps.inFlight(post) : post())
  const now = new Date()
  if (result.ok) {
    // The common case: the attempt row and the delivery's completion in one statement, shared with the other
    // attempts that succeed at the same moment.
    const success = {
      deliveryId: d.id,
      attempt: opts.attempt,
      statusCode: result.statusCode ?? null,
      durationMs: result.durationMs,
      at: now,
    }
    const recorded = deps.batching
      ? await deps.batching.recordSuccess(success)
      : (await recordSuccesses(db, [success])).has(d.id)
    return recorded ? 'succeeded' : 'skipped'
  }
  let outcome = 'retrying' as 'retrying' | 'abandoned'
  try {
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
      const delayMs = profile.nextRetryDelayMs(
        { attemptsMade: opts.attempt, firstAttemptAt: d.createdAt, now },
        deps.retry,
      )
      if (delayMs !== null) {
        await tx.webhookDelivery.update({
          where: { id: d.id },
          data: { attempts: opts.attempt, nextAttemptAt: new Date(now.getTime() + delayMs) },
        })
        await outbox.delivery(tx, { deliveryId: d.id, attempt: opts.attempt + 1 }, { delayMs })
        return
      }
      outcome = 'abandoned'
      await tx.webhookDelivery.update({
        where: { id: d.id },
        data: { status: 'abandoned', attempts: opts.attempt, completedAt: now, nextAttemptAt: null },
      })
      if (profile.onAbandon === 'mark-failing') {
        // Persistent failure: the endpoint is marked failing and the workspace's admins are told, once per change
        // from active to failing (other deliveries abandoned at the same time notify nobody again).
        const changed = await tx.webhook.updateMany({
          where: { id: w.id, status: 'active' },
          data: { status: 'failing' },
        })
        if (changed.count === 0) return
        await tx.notification.create({
          data: {
            id: newId('ntf'),
            workspaceId: w.workspaceId,
            kind: 'webhook.failing',
            message: `Webhook "${w.name}" (${w.url}) failed ${opts.attempt} delivery attempts and is now failing.`,
            data: {
              webhook_id: w.id,
              delivery_id: d.id,
              last_error: result.error ?? null,
              last_status: result.statusCode ?? null,
            },
          },
        })
      }
    })
  } catch (err) {
    // The webhook was deleted while the attempt ran: its delivery went with it, there is nothing left to record.
    if (isMissingRow(err)) return 'skipped'
    throw err
  }
  if (outcome === 'retrying') deps.onCommit?.()
  if (outcome === 'abandoned') {
    deps.log.warn(
      { deliveryId: d.id, webhookId: w.id, form: profile.form, error: result.error },
      'webhook delivery abandoned',
    )
  }
  return outcome
}

/** Prisma's "a foreign key names no row" and "no row to update": the delivery's row is gone. */
const isMissingRow = (err: unknown) => ['P2003', 'P2025'].includes(String((err as { code?: unknown })?.code))
