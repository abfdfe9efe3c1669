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
