export { isPublicAddress } from './public-address.guard.ts'
export { assertWebhookUrl } from './webhook-url.guard.ts'
export type {
  AssertWebhookUrlOptions,
  AssertWebhookUrlResult,
  HostLookup,
  WebhookUrlRejection,
} from './webhook-url.guard.ts'
export { BlockedAddressError, createGuardedDispatcher } from './guarded-dispatcher.transport.ts'
export type { GuardedDispatcherOptions } from './guarded-dispatcher.transport.ts'
export {
  FORM_A_RETRY_DEFAULTS,
  FORM_B_RETRY_SCHEDULE_MS,
  formARetryDelayMs,
  formAShouldRetry,
  formBRetryDelayMs,
  parseRetryScheduleMs,
  receiverAccepted,
} from './retry.policy.ts'
export type {
  FormARetryDecision,
  FormARetryDelayOptions,
  FormAShouldRetryOptions,
} from './retry.policy.ts'
export { deliverWebhook } from './deliver-webhook.transport.ts'
export type { DeliverWebhookOptions, DeliveryErrorKind, DeliveryResult } from './deliver-webhook.transport.ts'
export {
  assertNoReservedHeaders,
  buildAuthHeaders,
  RESERVED_HEADER_PREFIX,
  WEBHOOK_USER_AGENT,
} from './webhook-headers.policy.ts'
export type { HeaderCheckResult, WebhookAuth } from './webhook-headers.policy.ts'
export { openWebhookAuth, sealWebhookAuth, webhookAuthIsCurrent } from './webhook-auth.secrets.ts'
