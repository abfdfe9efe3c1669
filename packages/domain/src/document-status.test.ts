import { describe, expect, it } from 'vitest'
import { isUndeliveredDocument, PARKED_DOCUMENT_STATUSES } from './document-status.ts'

describe('document statuses', () => {
  it('in review and escalated documents hold their job (DESIGN: escalate keeps it parked)', () => {
    expect([...PARKED_DOCUMENT_STATUSES].sort()).toEqual(['escalated', 'in_review'])
  })
  it('parked and rejected documents are not delivered; processed ones are', () => {
    for (const s of ['in_review', 'escalated', 'rejected']) expect(isUndeliveredDocument(s)).toBe(true)
    for (const s of ['processing', 'completed', 'failed']) expect(isUndeliveredDocument(s)).toBe(false)
  })
})
