import { describe, expect, it } from 'vitest'
import { z } from 'zod'
import { FormASubmitJson } from '@quire/forms'

describe('FormASubmitJson', () => {
  it('accepts the Form A parameters with files as bucket references; run_kind defaults to prod', () => {
    const r = FormASubmitJson.parse({
      pipeline_id: 'pl_1',
      files: [{ bucket: 'in', key: 'a/b.pdf' }],
      metadata: { k: 'v' },
    })
    expect(r).toEqual({
      pipeline_id: 'pl_1',
      files: [{ bucket: 'in', key: 'a/b.pdf' }],
      metadata: { k: 'v' },
      run_kind: 'prod',
    })
  })

  it('rejects no files, unknown keys and malformed references', () => {
    for (const bad of [
      { pipeline_id: 'pl_1' },
      { pipeline_id: 'pl_1', files: [] },
      { pipeline_id: 'pl_1', file: [{ bucket: 'in', key: 'a' }] },
      { pipeline_id: 'pl_1', files: [{ bucket: 'in' }] },
      { pipeline_id: 'pl_1', files: [{ bucket: 'in', key: '' }] },
      { pipeline_id: 'pl_1', files: [{ bucket: 'in', key: 'a', extra: 1 }] },
      { files: [{ bucket: 'in', key: 'a' }] },
    ]) {
      expect(FormASubmitJson.safeParse(bad).success, JSON.stringify(bad)).toBe(false)
    }
  })

  it('converts to a JSON Schema for the OpenAPI document', () => {
    const schema = z.toJSONSchema(FormASubmitJson, { io: 'input' }) as {
      required?: string[]
      properties: Record<string, unknown>
    }
    expect(schema.required).toEqual(['pipeline_id', 'files'])
    expect(Object.keys(schema.properties)).toEqual([
      'pipeline_id',
      'files',
      'version',
      'source_tag',
      'metadata',
      'run_kind',
    ])
  })
})
