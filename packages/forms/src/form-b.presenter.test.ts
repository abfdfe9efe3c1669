// Spec, Job (Form B): "stages | Per-stage progress, timings and credits"; transitions: a success "settles to actual
// cost; remainder released", a stage error stops the job with the "whole reservation released".
import { describe, expect, it } from 'vitest'
import { presentFormBJob } from './form-b.presenter.ts'
import { at, jobs } from './presenter-samples.test-helper.ts'

const stageCredits = (job: (typeof jobs)[string]) =>
  (presentFormBJob(job, { stages: true, result: false }, at(5000)).stages ?? []).map((s) => s.credits)
const sum = (xs: number[]) => xs.reduce((a, b) => a + b, 0)

describe('Form B stages[].credits: what the job is charged for each stage', () => {
  it('a running job shows what its stages measured', () => {
    expect(sum(stageCredits({ ...jobs.processing!, stages: jobs.completed!.stages }))).toBe(2)
  })

  it('a settled job: its stages add up to the settlement', () => {
    expect(sum(stageCredits({ ...jobs.completed!, creditsUsed: 2 }))).toBe(2)
    // completed_with_errors settled 1 of the 2 credits parse measured: the stages say 1.
    expect(sum(stageCredits({ ...jobs.completedWithErrors!, creditsUsed: 1 }))).toBe(1)
  })

  it('a cancelled, failed or timed-out job, charged nothing, shows no stage credits', () => {
    for (const status of ['cancelled', 'failed', 'timed_out'] as const) {
      expect(sum(stageCredits({ ...jobs.completed!, status, creditsUsed: 0 })), status).toBe(0)
    }
  })
})

describe('Form B partial (spec: "Some documents moved on, others held for an operator")', () => {
  it('a partial job is not final and names its parked documents in review.documents', () => {
    const base = jobs.completed!
    const delivered = { ...base.documents[0]!, id: 'doc_ok', status: 'completed' }
    const parked = { ...base.documents[0]!, id: 'doc_parked', status: 'in_review' }
    const view = presentFormBJob(
      { ...base, status: 'partial', completedAt: null, creditsUsed: null, documents: [delivered, parked] },
      { stages: false, result: true },
      at(5000),
    )
    expect(view.status).toBe('partial')
    expect(view.completed_at).toBeNull()
    expect(view.review).toEqual({ documents: [{ id: 'doc_parked', status: 'in_review' }] })
    // The result is only for `completed` (spec); the delivered document is read through GET /v1/documents/{id}.
    expect(view.result).toBeUndefined()
  })
})
