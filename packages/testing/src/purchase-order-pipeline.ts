/**
 * The pipeline definition the review tests share: purchase orders (`po`) whose PO number is required, so a page
 * without one is parked for review after validate; post_processing on. `extra` adds or replaces top-level keys
 * (`split`, `review`, `destination`, ...).
 */
export function purchaseOrderPipeline(extra: Record<string, unknown> = {}) {
  return {
    document_types: [{ name: 'po', keywords: ['purchase order'], schema_id: 'po' }],
    schemas: {
      po: {
        fields: [
          { name: 'po_number', labels: ['PO Number'], required: true },
          { name: 'buyer', labels: ['Buyer'] },
        ],
      },
    },
    post_processing: { enabled: true },
    ...extra,
  }
}
