import { getDocument, getDocumentPage, listDocuments, MAX_PAGE_IMAGE_SIDE, reviewDocument } from '@quire/core'
import { CursorPage, presentCursorPage } from '@quire/forms'
import { DomainError } from '@quire/domain'
import { z } from 'zod'
import { Document, DocumentListItem } from '../../openapi/resource-schemas.ts'
import { defineRoute } from '../route.ts'

const CorrectedValue = z.union([z.string(), z.number(), z.null()])
/** A value bare or in the shape the document shows it (`{value, confidence?}`; a sent confidence is ignored). */
const CorrectedCell = z.union([
  CorrectedValue,
  z.strictObject({ value: CorrectedValue, confidence: z.number().min(0).max(1).optional() }).transform((v) => v.value),
])
/** One row of a corrected item table; its cells are checked and normalised in core (correctedValues). */
const CorrectedLineItem = z.strictObject({
  description: CorrectedCell.optional(),
  quantity: CorrectedCell.optional(),
  unit_price: CorrectedCell.optional(),
  amount: CorrectedCell.optional(),
})

export const ReviewDocumentRequest = z.strictObject({
  action: z.enum(['approve', 'reject', 'escalate']),
  /**
   * Corrected values by field name; they replace the extracted ones with confidence 1 (null: not found, confidence
   * 0). A value may come bare or in the shape the document shows it (`{value, confidence?}`; a sent confidence is
   * ignored: a correction is certain). A `line_items` field takes the whole table: an array of rows
   * `{description, quantity, unit_price, amount}`, each cell bare or `{value}`; it replaces the extracted rows.
   * Names and values are checked against the schema in core (correctedValues).
   */
  data: z.record(z.string().min(1), z.union([CorrectedCell, z.array(CorrectedLineItem).max(1000)])).optional(),
})
const DOCUMENT_ID = { id: 'Document id.' }

const ListQuery = z.object({
  limit: z.coerce.number().int().min(1).max(100).default(25),
  cursor: z.string().min(1).optional(),
  status: z
    .string()
    .transform((s) => s.split(','))
    .pipe(z.array(z.string().regex(/^[a-z_]+$/)))
    .optional(),
  job_id: z.string().min(1).optional(),
  pipeline_id: z.string().min(1).optional(),
  schema_id: z.string().min(1).optional(),
})
const LIST_DOCS: Record<string, string> = {
  limit: 'Page size, 1..100.',
  cursor: '`page.next_cursor` of the previous page; omit for the first page.',
  status: 'Comma-separated document statuses, e.g. `in_review,escalated` (the review queue: oldest first).',
  job_id: 'Only documents of this job.',
  pipeline_id: "Only documents of this pipeline's jobs.",
  schema_id: 'Only documents read with this schema.',
}
// A page image never changes (its key names the file page); it is private to the workspace's keys.
const PAGE_CACHE_CONTROL = 'private, max-age=86400, immutable'

export const DOCUMENT_ROUTES = [
  defineRoute<z.output<typeof ListQuery>>({
    method: 'get',
    path: '/v1/documents',
    operationId: 'listDocuments',
    tag: 'Documents',
    summary: 'List documents',
    description:
      'Cursor-paginated (keyset on creation time and id). Filtered to review statuses only (`in_review`, `escalated`) the oldest come first, as a review queue is worked; otherwise newest first. Documents of jobs past retention are not listed.',
    auth: 'key',
    scopes: ['documents:read'],
    query: { schema: ListQuery, docs: LIST_DOCS },
    responses: {
      '200': {
        description: 'One page of documents.',
        name: 'DocumentList',
        schema: z.object({ data: z.array(DocumentListItem), page: CursorPage }),
      },
    },
    handle: async ({ deps, principal, query: q }) => {
      const page = await listDocuments({
        db: deps.db,
        workspaceId: principal.workspaceId,
        limit: q.limit,
        cursor: q.cursor,
        filters: { status: q.status, jobId: q.job_id, pipelineId: q.pipeline_id, schemaId: q.schema_id },
      })
      return { status: 200, body: { data: page.data, page: presentCursorPage(page) } }
    },
  }),
  defineRoute({
    method: 'get',
    path: '/v1/documents/{id}',
    operationId: 'getDocument',
    tag: 'Documents',
    summary: 'Read a document',
    description: 'Lifecycle, lineage, event history and extracted data `{field: {value, confidence}}`.',
    auth: 'key',
    scopes: ['documents:read'],
    pathParams: DOCUMENT_ID,
    responses: { '200': { description: 'The document.', name: 'Document', schema: Document } },
    errors: ['not_found', 'job_expired'],
    handle: async ({ deps, principal, params }) => ({
      status: 200,
      body: await getDocument({ db: deps.db, workspaceId: principal.workspaceId, documentId: params.id! }),
    }),
  }),
  defineRoute<unknown, z.output<typeof ReviewDocumentRequest>>({
    method: 'post',
    path: '/v1/documents/{id}/review',
    operationId: 'reviewDocument',
    tag: 'Documents',
    summary: 'Review a document',
    description:
      "Approve (optionally with corrected values, which get confidence 1), reject or escalate a document parked for review (`in_review` or `escalated`). Corrections name fields of the document's schema (any name for `generic`) and are normalised like extracted values (dates `YYYY-MM-DD`, amounts numbers, currencies ISO 4217); a null correction reads as not found (`{value: null, confidence: 0}`); `line_items` takes an array of rows `{description, quantity, unit_price, amount}` (cells bare or `{value}`) that replaces the whole table, each cell normalised (numbers for quantity, unit_price and amount) with confidence 1; anything else is 400 `INVALID_PARAMETER`. A document of a cancelled, failed or timed-out job takes no review (409). Form B webhooks receive `review.approved`, `review.rejected` or `review.escalated`.",
    auth: 'key',
    scopes: ['documents:review'],
    pathParams: DOCUMENT_ID,
    body: { kind: 'json', name: 'ReviewDocumentRequest', schema: ReviewDocumentRequest },
    responses: { '200': { description: 'The document after the decision.', name: 'Document', schema: Document } },
    errors: ['not_found', 'job_expired', 'DOCUMENT_NOT_IN_REVIEW', 'INVALID_PARAMETER'],
    handle: async ({ deps, principal, params, body }) => {
      const workspaceId = principal.workspaceId
      await reviewDocument({
        db: deps.db,
        workspaceId,
        documentId: params.id!,
        action: body.action,
        corrections: body.data,
      })
      return { status: 200, body: await getDocument({ db: deps.db, workspaceId, documentId: params.id! }) }
    },
  }),
  defineRoute({
    method: 'get',
    path: '/v1/documents/{id}/pages/{n}',
    operationId: 'getDocumentPage',
    tag: 'Documents',
    summary: 'Read a page image of a document',
    description: `Page \`n\` (1-based, of the document) as a PNG whose longest side is at most ${MAX_PAGE_IMAGE_SIDE} px: the whole page, in the geometry the fields' \`bbox\` fractions refer to (a field's \`page\` names the file's page; a split document's page \`n\` is the file page \`pages[n-1]\`). Rendered once and kept; \`ETag\` and \`If-None-Match\` (304) apply. Past the last page, or for a file with no page images (DOCX, BMP): 404.`,
    auth: 'key',
    scopes: ['documents:read'],
    pathParams: { ...DOCUMENT_ID, n: 'Page number, 1-based.' },
    responses: {
      '200': { description: 'The page image.', text: 'image/png' },
      '304': { description: 'Not modified (the `If-None-Match` ETag is current).' },
    },
    errors: ['not_found', 'job_expired'],
    handle: async ({ ctx, deps, principal, params }) => {
      const n = /^[1-9]\d{0,5}$/.test(params.n!) ? Number(params.n) : 0
      if (n === 0) throw new DomainError('not_found', `no page ${params.n}`)
      const page = await getDocumentPage({
        db: deps.db,
        blobs: deps.blobs,
        renderer: deps.pages,
        workspaceId: principal.workspaceId,
        documentId: params.id!,
        page: n,
      })
      ctx.set('ETag', page.etag)
      ctx.set('Cache-Control', PAGE_CACHE_CONTROL)
      if (ctx.get('If-None-Match') === page.etag) return { status: 304, body: null }
      return { status: 200, type: 'image/png', body: await page.image() }
    },
  }),
]
