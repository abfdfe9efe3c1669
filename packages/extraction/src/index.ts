// @quire/extraction: pure document functions (no database, queue or HTTP).

export {
  FILE_TYPES,
  FILE_TYPE_MIME,
  IMAGE_FILE_TYPES,
  isFileType,
  isImageFileType,
  type FileType,
} from './file-types.ts'
export { ExtractionError, isExtractionError, type ExtractionErrorCode } from './errors.ts'
export {
  SNIFF_HEAD_BYTES,
  sniffFileType,
  sniffFileTypeFromHead,
  type SniffedFileType,
} from './sniff-file-type.ts'
export { checkPageLimit, countPages, type KeptHead, verifyReadable } from './count-pages.ts'
export { configureFileLimits, DEFAULT_FILE_LIMITS, fileLimits, type FileLimits } from './file-limits.ts'
export { DOCX_CHARS_PER_PAGE } from './docx.ts'
export { parseDocument, parsePdfTextLayer, type ParsedDocument, type ParseOptions } from './parse-document.ts'
export { openPdf, type PdfDocument } from './pdf-document.ts'
export {
  findPdftoppm,
  rasterisePdfPage,
  resolveRasteriser,
  type Rasteriser,
  type RasteriserChoice,
} from './rasterise-pdf-page.ts'
export {
  createTesseractOcrEngine,
  defaultLangPath,
  type OcrEngine,
  type OcrImage,
  type OcrResult,
  type RecognizeOptions,
  type TesseractOcrOptions,
} from './ocr.ts'
export { detectLanguage, type DocumentLanguage } from './detect-language.ts'
export {
  createOcrEngine,
  DEFAULT_OCR_ENGINE,
  OCR_ENGINES,
  type OcrEngineName,
  type OcrEngineOptions,
  readInDocumentLanguage,
} from './create-ocr-engine.ts'
export { createPaddleOcrEngine, defaultPaddleModelDir, type PaddleOcrOptions } from './paddle-ocr.ts'
export { imagePageForOcr } from './image-pages.ts'
export { classify, type Classification } from './classify.ts'
export { splitPages, type SplitGroup } from './split.ts'
export { extractFields } from './extract-fields.ts'
export { documentSource, type DocumentInput, type DocumentSource, type Provenance } from './document-source.ts'
export { Box, LayoutWord, PageLayout, parseLayouts } from './page-layout.ts'
export { layoutText } from './layout-text.ts'
export { pdfPageWords } from './pdf-page-words.ts'
export { wordsFromTsv } from './ocr-words.ts'
export { extractInvoice, INVOICE_FIELDS, type InvoiceField, type InvoiceFields } from './extract-invoice.ts'
export { extractGeneric, toSnakeCase } from './extract-generic.ts'
export { extractLineItems, findLineItems, lineItemsSum } from './extract-line-items.ts'
export {
  BUILTIN_SCHEMAS,
  BUILTIN_SCHEMA_IDS,
  isBuiltinSchemaId,
  resolveSchema,
  type BuiltinSchemaId,
} from './builtin-schemas.ts'
export {
  DocumentType,
  FieldDefinition,
  FieldType,
  NOT_FOUND,
  scalarFields,
  SchemaDefinition,
  SplitMode,
  type ExtractedData,
  type ExtractedFields,
  type FieldValue,
  type LineItem,
} from './schema.ts'
export { normaliseDate, findDates, inferDateOrder, type DateOrder, type FoundDate } from './normalise-date.ts'
export { normaliseAmount, findAmounts, parseNumber, type FoundAmount } from './normalise-amount.ts'
export { normaliseCurrency, inferCurrency, ISO_4217_CODES } from './normalise-currency.ts'
export { normaliseFieldValue, type DateReading } from './normalise-field-value.ts'
export { createParsePool, type ParseOutcome, type ParsePool, type ParsePoolOptions } from './parse-pool.ts'
export { fuseReadings } from './fuse-readings.ts'
