// The documents the pipeline and scale scenarios send: made by the test fixtures' generators, never stored.
import { INVOICE_LINES, scannedPdf, textPdf } from '../../tests/fixtures/make-fixtures.ts'

export const onePageTextPdf = () => textPdf([INVOICE_LINES])
export const tenPageTextPdf = () =>
  textPdf(Array.from({ length: 10 }, (_, i) => [...INVOICE_LINES, `Page ${i + 1} of 10`, `Line items ${i * 20 + 1}`]))
export const scannedPagePdf = () => scannedPdf([INVOICE_LINES])
