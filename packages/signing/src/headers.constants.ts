/** Header carrying the signature in both forms (`sha256=<hex>` in Form A, `<scheme>=<hex>` in Form B). */
export const SIGNATURE_HEADER = 'X-Service-Signature'

/** Form B: Unix epoch seconds covered by the signature. */
export const TIMESTAMP_HEADER = 'X-Service-Timestamp'

/** Form A: delivery id, unchanged across retries. */
export const DELIVERY_ID_HEADER = 'X-Service-Delivery-Id'

/** Signature scheme Quire emits for Form B (`v1=<hex>`); verifiers accept any scheme name. */
export const FORM_B_SCHEME = 'v1'

/** Default Form B timestamp tolerance, in seconds. */
export const DEFAULT_TOLERANCE_SECONDS = 300
