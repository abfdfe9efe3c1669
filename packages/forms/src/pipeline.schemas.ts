import { z } from 'zod'
import { Timestamp } from './shared.schemas.ts'

/** Response schemas of `pipeline.presenter.ts`; versions read "v<n>" in Form A and n in Form B. */
function build(form: 'A' | 'B') {
  const Version =
    form === 'A'
      ? z
          .string()
          .regex(/^v\d+$/)
          .describe('"v<n>"')
      : z.number().int().min(1)
  const Pipeline = z
    .object({
      id: z.string(),
      name: z.string(),
      platform: z.boolean().describe('Platform-provided (for example `parse`); cannot be changed.'),
      published: z.boolean().describe('Whether any version is published.'),
      latest_published_version: Version.nullable(),
      versions: z.array(
        z.object({
          version: Version,
          published: z.boolean(),
          published_at: Timestamp.nullable(),
          created_at: Timestamp,
        }),
      ),
      created_at: Timestamp,
    })
    .describe(`A pipeline with its versions (Form ${form}).`)
  const PipelineVersionCreated = Pipeline.extend({
    version: Version.describe('The version just created (a draft).'),
  }).describe('The pipeline with the number of the version just created.')
  return { Pipeline, PipelineVersionCreated }
}

export const PipelineSchemas = { A: build('A'), B: build('B') } as const
