import { getDocument, reviewDocument } from '@quire/core'
import { z } from 'zod'
import { Document } from '../../openapi/resource-schemas.ts'
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

export const DOCUMENT_ROUTES = [
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
]
