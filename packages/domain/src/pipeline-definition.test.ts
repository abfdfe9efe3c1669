import { describe, expect, it } from 'vitest'
import { boundWebhookIds, parsePipelineDefinition } from './pipeline-definition.ts'

describe('pipeline definition', () => {
  it('fills every default DESIGN.md gives', () => {
    const r = parsePipelineDefinition({})
    expect(r.ok && r.definition).toMatchObject({
      accept: { max_file_mb: 100 },
      credits: { per_page: 1 },
      routing: { catch_all_schema_id: 'generic' },
      split: { mode: 'none' },
      review: { min_confidence: 0 },
      post_processing: { enabled: false },
    })
  })
  it('names the path of each problem', () => {
    const r = parsePipelineDefinition({
      accept: { types: ['exe'] },
      schemas: { x: { fields: [{ name: 'a', pattern: '(' }] } },
    })
    expect(r.ok).toBe(false)
    if (!r.ok)
      expect(r.issues.map((i) => i.path)).toEqual(
        expect.arrayContaining(['accept.types.0', 'schemas.x.fields.0.pattern']),
      )
  })
  it('rejects unknown keys and a per-file limit above the platform 100 MB', () => {
    expect(parsePipelineDefinition({ nope: 1 }).ok).toBe(false)
    expect(parsePipelineDefinition({ accept: { max_file_mb: 101 } }).ok).toBe(false)
  })
  it('takes the languages of its documents (DESIGN: a pipeline may name languages), only known ones', () => {
    const r = parsePipelineDefinition({ languages: ['de', 'fr'] })
    expect(r.ok && r.definition.languages).toEqual(['de', 'fr'])
    expect(
      parsePipelineDefinition({}).ok &&
        'languages' in (parsePipelineDefinition({}) as { definition: object }).definition,
    ).toBe(false)
    const bad = parsePipelineDefinition({ languages: ['xx'] })
    expect(!bad.ok && bad.issues.map((i) => i.path)).toEqual(['languages.0'])
    expect(parsePipelineDefinition({ languages: [] }).ok).toBe(false)
  })
  it('DESIGN review.hold: takes "job" (the default) and "document", refuses anything else by name', () => {
    const r = parsePipelineDefinition({ review: { hold: 'job' } })
    expect(r.ok && r.definition.review.hold).toBe('job')
    const d = parsePipelineDefinition({})
    expect(d.ok && d.definition.review.hold).toBe('job')
    const doc = parsePipelineDefinition({ review: { hold: 'document' } })
    expect(doc.ok && doc.definition.review.hold).toBe('document')
    const bad = parsePipelineDefinition({ review: { hold: 'page' } })
    expect(!bad.ok && bad.issues.map((i) => i.path)).toEqual(['review.hold'])
  })
  it('lists the webhooks bound to stages', () => {
    const r = parsePipelineDefinition({
      bindings: { parse: { entry_webhook_id: 'w1' }, destination: { exit_webhook_id: 'w2' } },
    })
    expect(r.ok && boundWebhookIds(r.definition)).toEqual(['w1', 'w2'])
  })
})

describe('bindings', () => {
  it('accepts an edit-stage binding (spec: accepted but never fires) and rejects unknown stages', () => {
    expect(parsePipelineDefinition({ bindings: { edit: { entry_webhook_id: 'w' } } }).ok).toBe(true)
    expect(parsePipelineDefinition({ bindings: { review: { entry_webhook_id: 'w' } } }).ok).toBe(false)
  })
})
