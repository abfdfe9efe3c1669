export { createClient, type CreateClientOptions, detectForm } from './client.ts'
export { QuireApiError, QuireTimeoutError, WebhookVerificationError, type WebhookVerificationReason } from './errors.ts'
export type { FileInput, FileSource } from './files.ts'
export {
  FormAClient,
  type FormADocument,
  type FormAJob,
  type FormAJobCreated,
  type FormASubmitParams,
} from './form-a-client.ts'
export {
  FormBClient,
  type FormBDocument,
  type FormBJob,
  type FormBSubmitted,
  type FormBSubmitParams,
} from './form-b-client.ts'
export type { CursorPage } from './pagination.ts'
export type { WaitOptions } from './polling.ts'
export type { ClientOptions } from './transport.ts'
export {
  type FormAEvent,
  type FormBEvent,
  type HeadersLike,
  type VerifyFormBOptions,
  verifyFormA,
  verifyFormB,
} from './webhooks.ts'
/** Each form's generated OpenAPI types, for shapes the helpers do not name. */
export type * as FormA from './generated/form-a.ts'
export type * as FormB from './generated/form-b.ts'
