import { describe, expect, it } from 'vitest'
import { ROUTES } from '../routes/registry.ts'
import { acceptedParameters, bodiesOf, type MultipartBodySpec } from '../routes/route.ts'
import { describeNames, unknownParameters } from './submit-parameters.ts'

const submit = ROUTES.find((r) => r.path === '/v1/jobs' && r.method === 'post')!
const multipartOf = (form: 'A' | 'B') =>
  bodiesOf(submit, form).find((b): b is MultipartBodySpec => b.kind === 'multipart')!
const SUBMIT_PARAMETERS = { A: acceptedParameters(multipartOf('A')), B: acceptedParameters(multipartOf('B')) }

describe('accepted submit parameters, derived from the POST /v1/jobs declaration', () => {
  it('are the spec parameters of each form: Form A file + 5 text fields; Form B files + 7, also in the query', () => {
    expect([...SUBMIT_PARAMETERS.A.text].sort()).toEqual([
      'metadata',
      'pipeline_id',
      'run_kind',
      'source_tag',
      'version',
    ])
    expect([...SUBMIT_PARAMETERS.B.text].sort()).toEqual([
      'client_reference_id',
      'environment',
      'mode',
      'pipeline_id',
      'pipeline_version',
      'priority',
      'schema_id',
    ])
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
      unknownParameters(B, {
        text: ['pipline_id', 'mode', 'pipline_id'],
        files: ['files', 'file', 'files'],
        query: ['priority', 'x'],
      }),
    ).toEqual(['pipline_id', 'file', 'x'])
  })
  it('is empty for a request without a part of the form’s file field (the route answers MISSING_PART)', () => {
    expect(unknownParameters(B, { text: ['typo'], files: ['file'], query: ['x'] })).toEqual([])
    expect(unknownParameters(SUBMIT_PARAMETERS.A, { text: [], files: ['files'], query: [] })).toEqual([])
  })
  it('Form A takes no query parameters', () => {
    expect(
      unknownParameters(SUBMIT_PARAMETERS.A, { text: ['pipeline_id'], files: ['file'], query: ['pipeline_id'] }),
    ).toEqual(['pipeline_id'])
  })
  it('describes names safely and briefly', () => {
    expect(describeNames(['a', 'b"c'])).toBe('"a", "b\\"c"')
    expect(describeNames(Array.from({ length: 12 }, (_, i) => `n${i}`))).toMatch(/and 2 more$/)
    expect(describeNames(['x'.repeat(100)])).toBe(`"${'x'.repeat(64)}…"`)
  })
})
