import { describe, expect, it } from 'vitest'
import { FormASubmitFields } from '../routes/jobs/submit-form-a.ts'
import { FormBSubmitFields } from '../routes/jobs/submit-form-b.ts'
import { describeNames, SUBMIT_PARAMETERS, unknownParameters } from './submit-parameters.ts'

describe('accepted submit parameters', () => {
  it('are exactly the fields the route schemas read (a parameter added there must be added here)', () => {
    expect([...SUBMIT_PARAMETERS.A.text].sort()).toEqual(Object.keys(FormASubmitFields.shape).sort())
    expect([...SUBMIT_PARAMETERS.B.text].sort()).toEqual(Object.keys(FormBSubmitFields.shape).sort())
    expect(SUBMIT_PARAMETERS.A.fileField).toBe('file')
    expect(SUBMIT_PARAMETERS.B.fileField).toBe('files')
    expect(SUBMIT_PARAMETERS.A.query).toEqual([])
    expect(SUBMIT_PARAMETERS.B.query).toEqual(SUBMIT_PARAMETERS.B.text)
  })
})

describe('unknownParameters', () => {
  const B = SUBMIT_PARAMETERS.B
  it('names unknown text fields, other file fields and unknown query parameters once each, in order', () => {
    expect(
      unknownParameters(B, { text: ['pipline_id', 'mode', 'pipline_id'], files: ['files', 'file', 'files'], query: ['priority', 'x'] }),
    ).toEqual(['pipline_id', 'file', 'x'])
  })
  it('is empty for a request without a part of the form’s file field (the route answers MISSING_PART)', () => {
    expect(unknownParameters(B, { text: ['typo'], files: ['file'], query: ['x'] })).toEqual([])
    expect(unknownParameters(SUBMIT_PARAMETERS.A, { text: [], files: ['files'], query: [] })).toEqual([])
  })
  it('Form A takes no query parameters', () => {
    expect(unknownParameters(SUBMIT_PARAMETERS.A, { text: ['pipeline_id'], files: ['file'], query: ['pipeline_id'] })).toEqual(['pipeline_id'])
  })
  it('describes names safely and briefly', () => {
    expect(describeNames(['a', 'b"c'])).toBe('"a", "b\\"c"')
    expect(describeNames(Array.from({ length: 12 }, (_, i) => `n${i}`))).toMatch(/and 2 more$/)
    expect(describeNames(['x'.repeat(100)])).toBe(`"${'x'.repeat(64)}…"`)
  })
})
