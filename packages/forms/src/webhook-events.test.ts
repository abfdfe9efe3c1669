import { describe, expect, it } from 'vitest'
import { formARecipients, formBRecipients, type StoredEvent } from './webhook-events.ts'

const event = (over: Partial<StoredEvent>): StoredEvent => ({
  id: 'evt_1',
  type: 'stage.exited',
  workspaceId: 'ws',
  jobId: 'job_1',
  documentId: null,
  stage: 'parse',
  transition: 'exited',
  data: {},
  createdAt: new Date(),
  ...over,
})
const hooks = [
  { id: 'bound', events: [], status: 'active' as const },
  { id: 'subscriber', events: ['job.failed'], status: 'active' as const },
  { id: 'unreferenced', events: ['job.failed'], status: 'active' as const },
]

describe('Form A routing (spec: Form A events)', () => {
  const bindings = { parse: { exit_webhook_id: 'bound' }, extract: { entry_webhook_id: 'subscriber' } }
  it('a stage event goes to the webhook bound to that transition only', () => {
    expect(formARecipients(event({}), bindings, hooks)).toEqual([{ webhookId: 'bound', type: 'parse.exited' }])
    expect(formARecipients(event({ transition: 'entered', type: 'stage.entered' }), bindings, hooks)).toEqual([])
  })
  it('job events reach subscribers only when the pipeline references them in a binding', () => {
    const failed = event({ type: 'job.finished', stage: null, transition: null, data: { status: 'failed' } })
    expect(formARecipients(failed, bindings, hooks)).toEqual([{ webhookId: 'subscriber', type: 'job.failed' }])
  })
  it('job.completed fires for completed_with_errors, not for a clean completion', () => {
    const clean = event({ type: 'job.finished', stage: null, transition: null, data: { status: 'completed' } })
    expect(
      formARecipients(clean, bindings, [{ id: 'subscriber', events: ['job.completed'], status: 'active' }]),
    ).toEqual([])
    const partial = event({
      type: 'job.finished',
      stage: null,
      transition: null,
      data: { status: 'completed_with_errors' },
    })
    expect(
      formARecipients(partial, bindings, [{ id: 'subscriber', events: ['job.completed'], status: 'active' }]),
    ).toEqual([{ webhookId: 'subscriber', type: 'job.completed' }])
  })
  it('job.blocked and error_group.* go to bound subscribers in Form A, and are not Form B events', () => {
    const ops = [{ id: 'subscriber', events: ['job.blocked', 'error_group.escalated'], status: 'active' as const }]
    for (const type of ['job.blocked', 'error_group.escalated'] as const) {
      const e = event({ type, stage: null, transition: null, data: { error_group_id: 'egr_1' } })
      expect(formARecipients(e, bindings, ops)).toEqual([{ webhookId: 'subscriber', type }])
      expect(formBRecipients(e, [{ id: 'all', events: [], status: 'active' }])).toEqual([])
    }
    const opened = event({ type: 'error_group.opened', stage: null, transition: null })
    expect(formARecipients(opened, bindings, ops)).toEqual([])
  })
  it('source.entered and validate stage events never fire', () => {
    const b = { source: { entry_webhook_id: 'bound' }, validate: { exit_webhook_id: 'bound' } }
    expect(formARecipients(event({ stage: 'source', transition: 'entered', type: 'stage.entered' }), b, hooks)).toEqual(
      [],
    )
    expect(formARecipients(event({ stage: 'validate' }), b, hooks)).toEqual([])
  })
})

describe('Form B routing (spec: Form B events)', () => {
  it('delivers to subscribed active webhooks; empty list and * mean all', () => {
    const list = [
      { id: 'all', events: ['*'], status: 'active' as const },
      { id: 'default', events: [], status: 'active' as const },
      { id: 'other', events: ['job.failed'], status: 'active' as const },
      { id: 'failing', events: ['*'], status: 'failing' as const },
    ]
    const done = event({ type: 'job.finished', stage: null, transition: null, data: { status: 'completed' } })
    expect(formBRecipients(done, list).map((r) => r.webhookId)).toEqual(['all', 'default'])
    expect(formBRecipients(done, list)[0]!.type).toBe('job.completed')
  })
  it('stage events are not Form B events', () => {
    expect(formBRecipients(event({}), [{ id: 'all', events: ['*'], status: 'active' }])).toEqual([])
  })
})
