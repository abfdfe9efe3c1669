import { DomainError, newId } from '@quire/domain'
import { type Db, KEYSET_ORDER, keysetAfter, keysetPage } from '@quire/db'
import { generateSecret } from '@quire/signing'
import { SEALED_PREFIX, type SecretBox } from '@quire/secrets'
import {
  assertNoReservedHeaders,
  assertWebhookUrl,
  buildAuthHeaders,
  openWebhookAuth,
  receiverAccepted,
  sealWebhookAuth,
  webhookAuthIsCurrent,
} from '@quire/webhooks'

export type WebhookAuth =
  | { type: 'none' }
  | { type: 'api_key'; headerName: string; key: string; location?: string }
  | { type: 'basic'; username: string; password: string }

export type WebhookView = {
  id: string
  name: string
  url: string
  /** As stored: the credential (password, api_key value) is sealed; presenters never show it. */
  auth: WebhookAuth
  events: string[]
  headers: Record<string, string>
  description: string | null
  status: 'active' | 'failing'
  /** The signing secret in clear: only right after it was issued (create, rotate), never read back. */
  secret?: string
  createdAt: Date
}

export type UrlPolicy = { allowPrivate: boolean; allowInsecure: boolean }

type WebhookRow = NonNullable<Awaited<ReturnType<Db['webhook']['findUnique']>>>

/** Stored secrets are sealed and never shown: the view carries none (create and rotate add the one they issued). */
export function toWebhookView(w: WebhookRow): WebhookView {
  return {
    id: w.id,
    name: w.name,
    url: w.url,
    auth: (w.auth as WebhookAuth | null) ?? { type: 'none' },
    events: w.events,
    headers: (w.headers as Record<string, string> | null) ?? {},
    description: w.description,
    status: w.status,
    createdAt: w.createdAt,
  }
}

/** What a client asks for when creating a webhook, once each form's request is parsed. */
export type NewWebhook = {
  name: string
  url: string
  auth: WebhookAuth
  events: string[]
  headers?: Record<string, string>
  description?: string | null
}

/** Seals webhook secrets and receiver credentials before they are stored (@quire/secrets). */
export type Sealer = Pick<SecretBox, 'seal'>

export async function createWebhook(
  opts: NewWebhook & { db: Db; secrets: Sealer; workspaceId: string; urlPolicy: UrlPolicy },
): Promise<WebhookView & { secret: string }> {
  const checked = await assertWebhookUrl(opts.url, opts.urlPolicy)
  if (!checked.ok) throw new DomainError('INVALID_WEBHOOK_URL', `webhook url rejected: ${checked.reason}`)
  const headers = opts.headers ?? {}
  // The receiver credential's header obeys the static headers' rule (spec: `X-Service-` names are reserved): a key
  // sent as X-Service-Signature would be overwritten by the signature, the credential silently lost.
  const credential = buildAuthHeaders(opts.auth)
  const reserved = assertNoReservedHeaders({ ...headers, ...credential })
  if (!reserved.ok) throw new DomainError('RESERVED_HEADER', reserved.reason)
  // A static header of the credential's name would be replaced by the credential on every delivery: refused, not
  // accepted and then dropped.
  const credentialNames = new Set(Object.keys(credential).map((n) => n.toLowerCase()))
  const clash = Object.keys(headers).find((n) => credentialNames.has(n.toLowerCase()))
  if (clash) {
    throw new DomainError('RESERVED_HEADER', `header ${clash} carries the webhook's ${opts.auth.type} credential`)
  }
  const exists = await opts.db.webhook.findUnique({
    where: { workspaceId_name: { workspaceId: opts.workspaceId, name: opts.name } },
  })
  if (exists) throw new DomainError('WEBHOOK_NAME_CONFLICT', `a webhook named "${opts.name}" already exists`)
  const secret = generateSecret()
  try {
    const row = await opts.db.webhook.create({
      data: {
        id: newId('wh'),
        workspaceId: opts.workspaceId,
        name: opts.name,
        url: opts.url,
        authType: opts.auth.type,
        auth: sealWebhookAuth(opts.auth, opts.secrets) as object,
        events: opts.events,
        headers,
        description: opts.description ?? null,
        secret: opts.secrets.seal(secret),
      },
    })
    return { ...toWebhookView(row), secret }
  } catch (err) {
    if ((err as { code?: string }).code === 'P2002') {
      throw new DomainError('WEBHOOK_NAME_CONFLICT', `a webhook named "${opts.name}" already exists`)
    }
    throw err
  }
}

export async function getWebhook(opts: { db: Db; workspaceId: string; webhookId: string }): Promise<WebhookView> {
  const w = await opts.db.webhook.findUnique({ where: { id: opts.webhookId } })
  if (!w || w.workspaceId !== opts.workspaceId)
    throw new DomainError('not_found', `webhook ${opts.webhookId} not found`)
  return toWebhookView(w)
}

export async function listWebhooks(opts: { db: Db; workspaceId: string; page: number; pageSize: number }) {
  const where = { workspaceId: opts.workspaceId }
  const [rows, total] = await Promise.all([
    opts.db.webhook.findMany({
      where,
      orderBy: [{ createdAt: 'asc' }, { id: 'asc' }],
      skip: (opts.page - 1) * opts.pageSize,
      take: opts.pageSize,
    }),
    opts.db.webhook.count({ where }),
  ])
  return { data: rows.map((w) => toWebhookView(w)), total }
}

export async function rotateWebhookSecret(opts: { db: Db; secrets: Sealer; workspaceId: string; webhookId: string }) {
  await getWebhook(opts)
  const secret = generateSecret()
  const row = await opts.db.webhook.update({
    where: { id: opts.webhookId },
    data: { secret: opts.secrets.seal(secret) },
  })
  return { ...toWebhookView(row), secret }
}

/**
 * Deletes a webhook of the workspace, with its deliveries and their attempts: nothing more is sent to it, including
 * retries already scheduled (a delivery whose row is gone is skipped when its turn comes) and events of jobs that
 * captured it at submission (fan-out only addresses webhooks that exist). Pipeline versions binding it keep the id,
 * which then names no webhook and fires nothing; a new definition may not bind it. Its name is free again.
 */
export async function deleteWebhook(opts: { db: Db; workspaceId: string; webhookId: string }): Promise<void> {
  const { count } = await opts.db.webhook.deleteMany({ where: { id: opts.webhookId, workspaceId: opts.workspaceId } })
  if (count === 0) throw new DomainError('not_found', `webhook ${opts.webhookId} not found`)
}

export type ResealReport = { webhooks: number; resealed: number; wasPlaintext: number }

/**
 * `npm run secrets:rotate`: every webhook whose secret or credential is not sealed with the current key (older key,
 * or plaintext from before encryption) is opened and sealed again. Each row is locked while it is re-sealed, so a
 * concurrent create or rotate is never overwritten; running it twice re-seals nothing the second time.
 */
export async function resealWebhookSecrets(opts: { db: Db; secrets: SecretBox; batchSize?: number }) {
  const report: ResealReport = { webhooks: 0, resealed: 0, wasPlaintext: 0 }
  const box = opts.secrets
  let after = ''
  for (;;) {
    const ids = await opts.db.webhook.findMany({
      where: { id: { gt: after } },
      orderBy: { id: 'asc' },
      take: opts.batchSize ?? 200,
      select: { id: true },
    })
    if (ids.length === 0) return report
    after = ids.at(-1)!.id
    for (const { id } of ids) {
      await opts.db.$transaction(async (tx) => {
        await tx.$queryRaw`SELECT id FROM webhooks WHERE id = ${id} FOR UPDATE`
        const w = await tx.webhook.findUnique({ where: { id } })
        if (!w) return
        report.webhooks++
        const auth = (w.auth as WebhookAuth | null) ?? { type: 'none' }
        if (box.isCurrent(w.secret) && webhookAuthIsCurrent(auth, box)) return
        const sealed = (v: string) => v.startsWith(SEALED_PREFIX)
        if (!sealed(w.secret) || !webhookAuthIsCurrent(auth, { isCurrent: sealed })) report.wasPlaintext++
        await tx.webhook.update({
          where: { id },
          data: {
            secret: box.seal(box.open(w.secret)),
            auth: sealWebhookAuth(openWebhookAuth(auth, box), box) as object,
          },
        })
        report.resealed++
      })
    }
  }
}

export async function setWebhookStatus(opts: {
  db: Db
  workspaceId: string
  webhookId: string
  status: 'active' | 'failing'
}) {
  await getWebhook(opts)
  const row = await opts.db.webhook.update({ where: { id: opts.webhookId }, data: { status: opts.status } })
  return toWebhookView(row)
}

/**
 * A webhook's deliveries, newest first, keyset-paginated like jobs (DESIGN, "Webhook deliveries"), each with its
 * attempts in order and its next retry.
 */
export async function listDeliveries(opts: {
  db: Db
  workspaceId: string
  webhookId: string
  limit: number
  cursor?: string
}) {
  await getWebhook(opts)
  const rows = await opts.db.webhookDelivery.findMany({
    where: { AND: [{ webhookId: opts.webhookId }, keysetAfter(opts.cursor)] },
    orderBy: KEYSET_ORDER,
    take: opts.limit + 1,
    include: { attemptLog: { orderBy: { attempt: 'asc' } } },
  })
  const { page, hasMore, nextCursor } = keysetPage(rows, opts.limit)
  return {
    data: page.map((d) => ({
      id: d.id,
      event: d.eventType,
      status: d.status,
      attempt_count: d.attempts,
      next_retry_at: d.nextAttemptAt?.toISOString() ?? null,
      created_at: d.createdAt.toISOString(),
      completed_at: d.completedAt?.toISOString() ?? null,
      attempts: d.attemptLog.map((a) => ({
        attempt: a.attempt,
        status: receiverAccepted(a.statusCode) ? ('succeeded' as const) : ('failed' as const),
        response_code: a.statusCode,
        error: a.error,
        duration_ms: a.durationMs,
        at: a.createdAt.toISOString(),
      })),
    })),
    hasMore,
    nextCursor,
  }
}
