import { z } from 'zod'

/**
 * Wire shapes shared by both forms. Response schemas describe exactly what the presenters return; they are the
 * source of the OpenAPI document (apps/api/src/openapi), and `presenters.schemas.test.ts` parses real presenter
 * output with them so the two cannot drift.
 */

/** RFC 3339 timestamp in UTC, as `Date.toISOString()` writes it. */
export const Timestamp = z.iso.datetime().describe('RFC 3339 timestamp (UTC).')

/**
 * One extracted field: `{value, confidence}`; a field not found reads `{value: null, confidence: 0}`. `page` and
 * `bbox` say where it was read, each omitted when unknown (DESIGN, More contracts: Extraction).
 */
export const ExtractedField = z
  .object({
    value: z
      .unknown()
      .describe('Normalised value: dates YYYY-MM-DD, amounts JSON numbers, currencies ISO 4217; null when not found.'),
    confidence: z.number().min(0).max(1),
    page: z.number().int().min(1).optional().describe('1-based page of the file the value was read on.'),
    bbox: z
      .array(z.number().min(0).max(1))
      .length(4)
      .optional()
      .describe('Where on the page: [x0, y0, x1, y1] in fractions of its width and height, origin top left.'),
  })
  .describe('One extracted field.')

/** One row of an item table (`line_items`), each cell a field value (DESIGN, Extraction). */
export const LineItem = z
  .object({
    description: ExtractedField,
    quantity: ExtractedField,
    unit_price: ExtractedField,
    amount: ExtractedField,
  })
  .describe('One row of an item table: quantity, unit_price and amount are numbers; each cell says where it was read.')

export const ExtractedData = z
  .record(
    z.string(),
    z.union([ExtractedField, z.array(LineItem).describe('An item table (`line_items` of the invoice schema).')]),
  )
  .describe('Extracted fields by name; `line_items` is an array of rows.')

export const WebhookStatus = z
  .enum(['active', 'failing'])
  .describe('`failing` after persistent delivery failure (Form B); re-enable with PATCH.')

/** Cursor page object of `GET /v1/jobs`. */
export const CursorPage = z.object({
  next_cursor: z.string().nullable().describe('Pass as `cursor` for the next page; null on the last page.'),
  has_more: z.boolean().describe('`false` on the last page.'),
})

/** The page object of a keyset page, as every cursor-paginated list answers it. */
export const presentCursorPage = (page: {
  nextCursor: string | null
  hasMore: boolean
}): z.output<typeof CursorPage> => ({
  next_cursor: page.nextCursor,
  has_more: page.hasMore,
})

/** Page object of the page-numbered lists (pipelines, webhooks). */
export const NumberedPage = z.object({
  page: z.number().int().min(1),
  page_size: z.number().int().min(1).max(100),
  total: z.number().int().min(0).describe('Total number of items across all pages.'),
})
