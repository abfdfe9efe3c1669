import { STAGES } from '@quire/domain'

/** Wire event names each form accepts in a webhook's `events` list. */
export const FORM_A_EVENTS: string[] = [
  ...STAGES.flatMap((s) => [`${s}.entered`, `${s}.exited`]),
  'job.failed',
  'job.completed',
  'job.review_required',
  'job.blocked',
  'error_group.opened',
  'error_group.escalated',
  'error_group.resolved',
]

export const FORM_B_EVENTS: string[] = [
  'job.started',
  'job.completed',
  'job.failed',
  'document.extracted',
  'doc.quarantined',
  'review.approved',
  'review.rejected',
  'review.escalated',
  'pipeline.deployed',
]

export type StoredEvent = {
  id: string
  type: string
  workspaceId: string
  jobId: string | null
  documentId: string | null
  stage: string | null
  transition: string | null
  data: Record<string, unknown>
  createdAt: Date
}

export type CandidateWebhook = { id: string; events: string[]; status: 'active' | 'failing' }
export type Bindings = Partial<Record<string, { entry_webhook_id?: string; exit_webhook_id?: string }>>
export type Recipient = { webhookId: string; type: string }

/** The Form A wire event an internal event becomes, if any. */
export function formAEventType(e: StoredEvent): string | null {
  if ((e.type === 'stage.entered' || e.type === 'stage.exited') && e.stage) {
    // The validate stage has no events in Form A; source fires only on exit.
    if (e.stage === 'validate' || (e.stage === 'source' && e.transition === 'entered')) return null
    return `${e.stage}.${e.transition}`
  }
  if (e.type === 'job.finished') {
    const status = e.data.status
    if (status === 'failed' || status === 'timed_out') return 'job.failed'
    if (status === 'completed_with_errors') return 'job.completed'
    return null
  }
  if (e.type === 'document.review_required') return 'job.review_required'
  // A blocked job and its error group; delivered like the other job events (to bound webhooks listing them).
  if (
    e.type === 'job.blocked' ||
    e.type === 'error_group.opened' ||
    e.type === 'error_group.escalated' ||
    e.type === 'error_group.resolved'
  )
    return e.type
  return null
}

/**
 * Form A: a stage event goes to the webhook bound to that stage transition; any event also goes to webhooks that
 * list it in `events`, but only to webhooks the job's pipeline references in a binding.
 */
export function formARecipients(e: StoredEvent, bindings: Bindings, webhooks: CandidateWebhook[]): Recipient[] {
  const type = formAEventType(e)
  if (!type) return []
  const referenced = new Set<string>()
  for (const b of Object.values(bindings)) {
    if (b?.entry_webhook_id) referenced.add(b.entry_webhook_id)
    if (b?.exit_webhook_id) referenced.add(b.exit_webhook_id)
  }
  const out = new Set<string>()
  if (e.stage && e.transition) {
    const b = bindings[e.stage]
    const bound = e.transition === 'entered' ? b?.entry_webhook_id : b?.exit_webhook_id
    if (bound) out.add(bound)
  }
  for (const w of webhooks) if (referenced.has(w.id) && w.events.includes(type)) out.add(w.id)
  const known = new Set(webhooks.map((w) => w.id))
  return [...out].filter((id) => known.has(id)).map((webhookId) => ({ webhookId, type }))
}

const REVIEW_EVENTS: Record<string, string> = {
  approve: 'review.approved',
  reject: 'review.rejected',
  escalate: 'review.escalated',
}

export function formBEventType(e: StoredEvent): string | null {
  switch (e.type) {
    case 'job.started':
      return 'job.started'
    case 'document.extracted':
      return 'document.extracted'
    case 'pipeline.deployed':
      return 'pipeline.deployed'
    case 'document.quarantined':
      return 'doc.quarantined'
    case 'document.reviewed':
      return REVIEW_EVENTS[String(e.data.action)] ?? null
    case 'job.finished': {
      const status = e.data.status
      return status === 'failed' || status === 'timed_out' ? 'job.failed' : 'job.completed'
    }
    default:
      return null
  }
}

/** Form B: every active webhook subscribed to the event (empty list or `*` means all). */
export function formBRecipients(e: StoredEvent, webhooks: CandidateWebhook[]): Recipient[] {
  const type = formBEventType(e)
  if (!type) return []
  return webhooks
    .filter((w) => w.status === 'active')
    .filter((w) => w.events.length === 0 || w.events.includes('*') || w.events.includes(type))
    .map((w) => ({ webhookId: w.id, type }))
}
