export { generateSecret, SECRET_PREFIX } from './secret.signing.ts'
export { signFormA, verifyFormA } from './form-a.signing.ts'
export type { VerifyFormAOptions } from './form-a.signing.ts'
export { signFormB, verifyFormB } from './form-b.signing.ts'
export type { VerifyFormBOptions, VerifyFormBResult } from './form-b.signing.ts'
export {
  DEFAULT_TOLERANCE_SECONDS,
  DELIVERY_ID_HEADER,
  FORM_B_SCHEME,
  SIGNATURE_HEADER,
  TIMESTAMP_HEADER,
} from './headers.constants.ts'
