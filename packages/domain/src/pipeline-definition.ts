import { z } from 'zod'
import { STAGES } from './stages.ts'

export const FILE_TYPES = ['pdf', 'docx', 'png', 'jpeg', 'tiff', 'bmp', 'gif', 'webp'] as const
export type FileType = (typeof FILE_TYPES)[number]

export const PLATFORM_MAX_FILE_MB = 100
/** Languages whose documents Quire reads in their own conventions (ISO 639-1). */
export const DOCUMENT_LANGUAGES = ['en', 'de', 'fr', 'nl', 'es', 'it'] as const
export type DocumentLanguage = (typeof DOCUMENT_LANGUAGES)[number]

export const SchemaField = z.strictObject({
  name: z.string().min(1).max(100),
  /** `line_items`: an item table, rows `{description, quantity, unit_price, amount}` (DESIGN, Extraction). */
  type: z.enum(['string', 'number', 'date', 'amount', 'currency', 'line_items']).default('string'),
  labels: z.array(z.string().min(1)).default([]),
  pattern: z
    .string()
    .refine((p) => {
      try {
        new RegExp(p)
        return true
      } catch {
        return false
      }
    }, 'not a valid regular expression')
    .optional(),
  required: z.boolean().default(false),
})
export type SchemaField = z.infer<typeof SchemaField>

export const ExtractionSchema = z.strictObject({ fields: z.array(SchemaField).min(1) })
export type ExtractionSchema = z.infer<typeof ExtractionSchema>

const Binding = z.strictObject({
  entry_webhook_id: z.string().min(1).optional(),
  exit_webhook_id: z.string().min(1).optional(),
})

/** A pipeline definition; every key optional, defaults as DESIGN.md gives them. */
/** DESIGN `review.hold`: what a parked document holds back. */
export const REVIEW_HOLDS = ['job', 'document'] as const

export const PipelineDefinition = z.strictObject({
  accept: z
    .strictObject({
      types: z
        .array(z.enum(FILE_TYPES))
        .min(1)
        .default([...FILE_TYPES]),
      max_file_mb: z.number().positive().max(PLATFORM_MAX_FILE_MB).default(PLATFORM_MAX_FILE_MB),
    })
    .prefault({}),
  // At most 100,000 a page, so that a document of the page limit still costs what a balance can hold.
  credits: z.strictObject({ per_page: z.number().int().min(0).max(100_000).default(1) }).prefault({}),
  document_types: z
    .array(
      z.strictObject({
        name: z.string().min(1),
        keywords: z.array(z.string().min(1)).default([]),
        schema_id: z.string().min(1).optional(),
      }),
    )
    .default([]),
  routing: z.strictObject({ catch_all_schema_id: z.string().min(1).default('generic') }).prefault({}),
  schemas: z.record(z.string().min(1), ExtractionSchema).default({}),
  split: z.strictObject({ mode: z.enum(['none', 'per_page', 'by_type']).default('none') }).prefault({}),
  // The languages of the pipeline's documents: OCR reads their letters. Absent: Quire decides from the text.
  languages: z.array(z.enum(DOCUMENT_LANGUAGES)).min(1).max(DOCUMENT_LANGUAGES.length).optional(),
  review: z
    .strictObject({
      min_confidence: z.number().min(0).max(1).default(0),
      // What a parked document holds in a job told to wait for review: the whole job (`job`, it waits
      // `awaiting_review`), or only itself (`document`: the others go on and the job reads `partial`).
      hold: z.enum(REVIEW_HOLDS).default('job'),
    })
    .prefault({}),
  post_processing: z.strictObject({ enabled: z.boolean().default(false) }).prefault({}),
  // An operator-configured destination (a QUIRE_DESTINATIONS name) the result JSON is also written to.
  destination: z.strictObject({ name: z.string().min(1).max(63) }).optional(),
  // `edit` is accepted for compatibility but never fires (spec, Form A events); so does `source.entered`.
  bindings: z.partialRecord(z.enum([...STAGES, 'edit']), Binding).default({}),
})
export type PipelineDefinition = z.infer<typeof PipelineDefinition>
export type PipelineDefinitionInput = z.input<typeof PipelineDefinition>

export type DefinitionIssue = { path: string; message: string }

export function parsePipelineDefinition(
  input: unknown,
): { ok: true; definition: PipelineDefinition } | { ok: false; issues: DefinitionIssue[] } {
  const result = PipelineDefinition.safeParse(input ?? {})
  if (result.success) return { ok: true, definition: result.data }
  return {
    ok: false,
    issues: result.error.issues.map((i) => ({ path: i.path.join('.'), message: i.message })),
  }
}

/** Webhook ids a definition binds to stages; a job captures them at submission. */
export function boundWebhookIds(def: PipelineDefinition): string[] {
  const ids = new Set<string>()
  for (const b of Object.values(def.bindings)) {
    if (b?.entry_webhook_id) ids.add(b.entry_webhook_id)
    if (b?.exit_webhook_id) ids.add(b.exit_webhook_id)
  }
  return [...ids]
}
