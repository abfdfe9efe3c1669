// The response schemas (the source of the OpenAPI document) against what the presenters really return: every sample
// must parse, parsing must not drop a key (zod strips undeclared keys, so an undeclared field fails `toEqual`), and
// every declared key must show up in some sample (so the schema declares nothing the presenter never writes).
import { describe, expect, it } from 'vitest'
import type { z } from 'zod'
import { presentFormAJob, presentFormAJobCreated, presentFormAWebhook } from './form-a.presenter.ts'
import { FormAJob, FormAJobCreated, FormAWebhook } from './form-a.schemas.ts'
import { presentFormBJob, presentFormBSubmitted, presentFormBWebhook } from './form-b.presenter.ts'
import { FormBJob, FormBJobSubmitted, FormBWebhook, FormBWebhookWithSecret } from './form-b.schemas.ts'
import { presentPipeline } from './pipeline.presenter.ts'
import { PipelineSchemas } from './pipeline.schemas.ts'
import { at, jobs, pipelines, webhooks } from './presenter-samples.test-helper.ts'

/** Parses every sample; returns the keys seen so the caller can check the schema declares no unused key. */
function conforms(schema: z.ZodObject, samples: unknown[]): Set<string> {
  const seen = new Set<string>()
  for (const sample of samples) {
    const parsed = schema.safeParse(sample)
    expect(parsed.error?.issues ?? [], JSON.stringify(sample)).toEqual([])
    // zod drops keys a schema does not declare: equality means the presenter wrote nothing undeclared.
    expect(parsed.data).toEqual(sample)
    for (const k of Object.keys(sample as object)) seen.add(k)
  }
  return seen
}

const declared = (schema: z.ZodObject) => new Set(Object.keys(schema.shape))
const views = Object.values(jobs)
const include = [
  { stages: false, result: false },
  { stages: true, result: false },
  { stages: false, result: true },
  { stages: true, result: true },
]

describe('Form A response schemas match the presenters', () => {
  it('job created', () => {
    const seen = conforms(FormAJobCreated, views.map(presentFormAJobCreated))
    expect(seen).toEqual(declared(FormAJobCreated))
  })
  it('job', () => {
    const seen = conforms(FormAJob, views.map(presentFormAJob))
    expect(seen).toEqual(declared(FormAJob))
  })
  it('webhook, secret revealed and masked', () => {
    const seen = conforms(
      FormAWebhook,
      webhooks.flatMap((w) => [true, false].map((revealSecret) => presentFormAWebhook(w, { revealSecret }))),
    )
    expect(seen).toEqual(declared(FormAWebhook))
    expect(presentFormAWebhook(webhooks[0]!, { revealSecret: false }).hmac_secret).toBe('***')
  })
})

describe('Form B response schemas match the presenters', () => {
  it('job, every include combination', () => {
    const seen = conforms(
      FormBJob,
      views.flatMap((j) => include.map((inc) => presentFormBJob(j, inc, at(5000)))),
    )
    expect(seen).toEqual(declared(FormBJob))
  })
  it('submitted entry', () => {
    const seen = conforms(
      FormBJobSubmitted,
      views.map((j) => presentFormBSubmitted(j, 'https://quire.example')),
    )
    expect(seen).toEqual(declared(FormBJobSubmitted))
  })
  it('webhook: read back without the secret, created with it', () => {
    const read = conforms(
      FormBWebhook,
      webhooks.map((w) => presentFormBWebhook(w, { revealSecret: false })),
    )
    expect(read).toEqual(declared(FormBWebhook))
    const created = conforms(
      FormBWebhookWithSecret,
      webhooks.map((w) => presentFormBWebhook(w, { revealSecret: true })),
    )
    expect(created).toEqual(declared(FormBWebhookWithSecret))
  })
})

describe('pipeline response schemas match the presenter in each form', () => {
  for (const form of ['A', 'B'] as const) {
    it(`Form ${form}`, () => {
      const { Pipeline, PipelineVersionCreated } = PipelineSchemas[form]
      expect(
        conforms(
          Pipeline,
          pipelines.map((p) => presentPipeline(p, form)),
        ),
      ).toEqual(declared(Pipeline))
      // POST /v1/pipelines/{id}/versions adds the new version number, in the form's notation.
      const created = pipelines.map((p) => ({ ...presentPipeline(p, form), version: form === 'A' ? 'v2' : 2 }))
      expect(conforms(PipelineVersionCreated, created)).toEqual(declared(PipelineVersionCreated))
      // The other form's notation does not pass.
      const other = form === 'A' ? 'B' : 'A'
      expect(Pipeline.safeParse(presentPipeline(pipelines[0]!, other)).success).toBe(false)
    })
  }
})
