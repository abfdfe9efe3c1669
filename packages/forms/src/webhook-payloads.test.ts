import { describe, expect, it } from 'vitest'
import { jobs, t0 } from './presenter-samples.test-helper.ts'
import { buildFormAPayload } from './webhook-payloads.ts'
import type { StoredEvent } from './webhook-events.ts'

const exited = (stage: string, recorded: { status: string; stage_now: string }): StoredEvent => ({
  id: 'evt_1',
  type: `${stage}.exited`,
  workspaceId: 'ws_1',
  jobId: 'job_1',
  documentId: null,
  stage,
  transition: 'exited',
  data: { job: recorded },
  createdAt: t0,
})

const payload = (event: StoredEvent) =>
  buildFormAPayload({ deliveryId: 'del_1', type: event.type, event, job: jobs.completed!, baseUrl: 'https://q.test' })
    .data as { job: Record<string, unknown> & { trace: { stage: string }[] } }

// Spec, Events (Form A): "On `*.exited` events, `data.job` is a snapshot of the job in the GET job shape";
// "`destination.exited` ... is the clean job-complete signal". The fan-out may run after the job has finished.
describe('Form A data.job snapshot', () => {
  it('an earlier stage exit shows the job as it was then: its status, no completed_at, no later stage in trace', () => {
    const { job } = payload(exited('parse', { status: 'processing', stage_now: 'parse' }))
    expect(job).toMatchObject({ job_id: 'job_1', status: 'processing', stage_now: 'parse' })
    expect(job.completed_at).toBeUndefined()
    expect(job.trace.map((t) => t.stage)).toEqual(['init', 'parse'])
    // Its documents were not completed yet either (destination completes them).
    expect(jobs.completed!.documents.some((d) => d.status === 'completed')).toBe(true)
    expect(job.documents).toEqual(
      jobs.completed!.documents.map((d) =>
        expect.objectContaining({ id: d.id, status: d.status === 'completed' ? 'processing' : d.status }),
      ),
    )
  })

  it('destination.exited, the job-complete signal, shows the finished job with its final status', () => {
    const { job } = payload(exited('destination', { status: 'processing', stage_now: 'destination' }))
    expect(job).toMatchObject({
      job_id: 'job_1',
      status: 'completed',
      completed_at: jobs.completed!.completedAt!.toISOString(),
    })
    expect(job.stage_now).toBeUndefined()
    expect(job.trace.map((t) => t.stage)).toContain('destination')
  })
})
