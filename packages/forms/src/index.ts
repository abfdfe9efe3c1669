export {
  formAStageName,
  formAStatus,
  formAVersion,
  parseFormAVersion,
  presentFormAJob,
  presentFormAJobCreated,
  presentFormAWebhook,
} from './form-a.presenter.ts'
export { parseInclude, presentFormBJob, presentFormBSubmitted, presentFormBWebhook } from './form-b.presenter.ts'
export type { FormBInclude } from './form-b.presenter.ts'
export {
  FORM_A_EVENTS,
  FORM_B_EVENTS,
  formAEventType,
  formARecipients,
  formBEventType,
  formBRecipients,
} from './webhook-events.ts'
export type { StoredEvent, CandidateWebhook, Bindings, Recipient } from './webhook-events.ts'
export { buildFormAPayload, buildFormBPayload } from './webhook-payloads.ts'
export { presentPipeline } from './pipeline.presenter.ts'
export {
  CursorPage,
  presentCursorPage,
  ExtractedData,
  ExtractedField,
  LineItem,
  NumberedPage,
  Timestamp,
  WebhookStatus,
} from './shared.schemas.ts'
export { FormAJob, FormAJobCreated, FormAJobStatus, FormAWebhook } from './form-a.schemas.ts'
export {
  FormBJob,
  FormBJobStatus,
  FormBJobSubmitted,
  FormBResultDocument,
  FormBStage,
  FormBWebhook,
  FormBWebhookWithSecret,
} from './form-b.schemas.ts'
export { PipelineSchemas } from './pipeline.schemas.ts'
export {
  API_FORMS,
  formProfile,
  type ApiForm,
  type DeliveryContext,
  type FormProfile,
  type RetrySettings,
} from './form-profile.ts'
export { FormACreateWebhook, FormBCreateWebhook, parseFormAWebhook, parseFormBWebhook } from './webhook-requests.ts'
export {
  checkMetadata,
  FormABucketFileRef,
  FormASubmitFields,
  FormASubmitJson,
  FormBSubmitFields,
  parseMetadata,
} from './submit-requests.ts'
