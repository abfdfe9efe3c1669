import { describe, expect, it } from 'vitest'
import {
  canTransition,
  endedWithoutResult,
  FINAL_JOB_STATUSES,
  isCancellable,
  isFinalStatus,
  JOB_STATUSES,
} from './job-status.ts'

describe('job state machine', () => {
  it('final statuses (spec Form B table) have no way out', () => {
    for (const from of FINAL_JOB_STATUSES) for (const to of JOB_STATUSES) expect(canTransition(from, to)).toBe(false)
  })
  it('a queued job can start, be cancelled or fail, but not complete without running', () => {
    expect(canTransition('queued', 'preprocessing')).toBe(true)
    expect(canTransition('queued', 'cancelled')).toBe(true)
    expect(canTransition('queued', 'completed')).toBe(false)
  })
  it('blocked goes back to processing on an operator re-run', () => {
    expect(canTransition('blocked', 'processing')).toBe(true)
  })
  it('DESIGN review.hold document: partial is not final; it resumes to processing, finishes, is cancelled or (sync) times out', () => {
    expect(isFinalStatus('partial')).toBe(false)
    for (const to of ['processing', 'completed', 'completed_with_errors', 'cancelled', 'timed_out'] as const) {
      expect(canTransition('partial', to), to).toBe(true)
    }
    expect(canTransition('processing', 'partial')).toBe(true)
    expect(canTransition('partial', 'awaiting_review')).toBe(false)
  })
  it('cancel applies to every non-final status', () => {
    expect(JOB_STATUSES.filter(isCancellable)).toEqual(JOB_STATUSES.filter((s) => !FINAL_JOB_STATUSES.includes(s)))
  })
  it('cancelled, failed and timed-out jobs ended without a result; completed ones did not, nor running ones', () => {
    expect(JOB_STATUSES.filter(endedWithoutResult)).toEqual(['failed', 'timed_out', 'cancelled'])
  })
})
