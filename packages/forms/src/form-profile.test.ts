import { JOB_STATUSES } from '@quire/domain'
import { describe, expect, it } from 'vitest'
import { formAStatus } from './form-a.presenter.ts'
import { formProfile } from './form-profile.ts'

describe('job list status filter, per form', () => {
  it('Form A: each of its four statuses selects every internal status it shows as (spec, Job statuses Form A)', () => {
    const a = formProfile('A')
    expect(a.jobStatuses).toEqual(['processing', 'completed', 'failed', 'cancelled'])
    expect(a.internalJobStatuses(['processing']).sort()).toEqual(
      ['awaiting_review', 'blocked', 'partial', 'preprocessing', 'processing', 'queued'].sort(),
    )
    expect(a.internalJobStatuses(['completed']).sort()).toEqual(['completed', 'completed_with_errors'])
    expect(a.internalJobStatuses(['failed']).sort()).toEqual(['failed', 'timed_out'])
    expect(a.internalJobStatuses(['cancelled'])).toEqual(['cancelled'])
    // The four partition the internal statuses.
    const union = a.jobStatuses.flatMap((s) => a.internalJobStatuses([s]))
    expect(union.sort()).toEqual([...JOB_STATUSES].sort())
    for (const s of JOB_STATUSES) expect(a.internalJobStatuses([formAStatus(s)])).toContain(s)
  })

  it('Form B: its statuses are the internal ones, one to one', () => {
    const b = formProfile('B')
    expect([...b.jobStatuses].sort()).toEqual([...JOB_STATUSES].sort())
    expect(b.internalJobStatuses(['queued', 'timed_out'])).toEqual(['queued', 'timed_out'])
  })
})

describe('upload types, per form', () => {
  it('Form A: PDF, TIFF, PNG, JPEG or DOCX; Form B adds BMP, GIF and WebP (spec, POST /v1/jobs)', () => {
    expect([...formProfile('A').uploadTypes].sort()).toEqual(['docx', 'jpeg', 'pdf', 'png', 'tiff'])
    expect([...formProfile('B').uploadTypes].sort()).toEqual([
      'bmp',
      'docx',
      'gif',
      'jpeg',
      'pdf',
      'png',
      'tiff',
      'webp',
    ])
  })
})
