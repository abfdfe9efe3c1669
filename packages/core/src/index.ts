export { recordEvents } from './events/record-event.ts'
export type { EventType, EventInput } from './events/record-event.ts'
export {
  createApiKey,
  authenticateApiKey,
  PrincipalChanged,
  RecentPrincipals,
  revokeApiKey,
} from './workspaces/api-keys.ts'
export type { Principal, CreatedApiKey, KeyState } from './workspaces/api-keys.ts'
export {
  createWorkspace,
  getWorkspace,
  updateWorkspace,
  addCredits,
  listNotifications,
} from './workspaces/workspaces.ts'
export type { WorkspaceView } from './workspaces/workspaces.ts'
export {
  PLATFORM_PARSE_PIPELINE_ID,
  ensurePlatformPipelines,
  createPipeline,
  createPipelineVersion,
  publishPipelineVersion,
  getPipeline,
  getPipelineDefinition,
  listPipelines,
  resolvePipeline,
} from './pipelines/pipelines.ts'
export type { PipelineView, ResolvedPipeline } from './pipelines/pipelines.ts'
export { intakeFile, discardUploads, recordQuarantine } from './jobs/inspect-files.ts'
export type { UploadedFile, InspectedFile } from './jobs/inspect-files.ts'
export { createJob } from './jobs/create-job.ts'
export type { JobOptions } from './jobs/create-job.ts'
export { getJob, listJobs } from './jobs/read-jobs.ts'
export type { JobListFilters } from './jobs/read-jobs.ts'
export { cancelJob } from './jobs/cancel-job.ts'
export type { JobView } from './jobs/job-view.ts'
export { toJobView, JOB_VIEW_INCLUDE } from './jobs/job-view.ts'
export { runStage, runStages, failJob } from './stages/run-stage.ts'
export type { StageRunResult } from './stages/run-stage.ts'
export type { StageDeps } from './stages/stage-context.ts'
export {
  createWebhook,
  deleteWebhook,
  getWebhook,
  listWebhooks,
  rotateWebhookSecret,
  setWebhookStatus,
  listDeliveries,
  resealWebhookSecrets,
  toWebhookView,
} from './webhooks/webhooks.ts'
export type {
  WebhookView,
  WebhookAuth,
  UrlPolicy,
  NewWebhook,
  ResealReport,
  Sealer,
} from './webhooks/webhooks.ts'
export { awaitJobs, degradeSyncJobs } from './jobs/await-jobs.ts'
export { getDocument } from './documents/get-document.ts'
export { listDocuments, type DocumentListFilters, type DocumentListItem } from './documents/list-documents.ts'
export { getDocumentPage, pageImageKey } from './documents/get-document-page.ts'
export { createPageRenderer, type PageRenderer } from './documents/page-renderer.ts'
export { MAX_PAGE_IMAGE_SIDE } from './documents/page-image.ts'
export { expireJobs, timeOutSyncJobs } from './jobs/expire-jobs.ts'
export { jobIdOfBlobKey } from './jobs/create-job.ts'
export { sweepUnownedBlobs } from './jobs/sweep-unowned-blobs.ts'
export { reviewDocument } from './documents/review-document.ts'
export type { ReviewAction } from './documents/review-document.ts'
export { requeueStalledWork } from './jobs/requeue-stalled-work.ts'
export {
  blockJob,
  getErrorGroup,
  listErrorGroups,
  rerunErrorGroup,
  retryDueErrorGroups,
} from './jobs/error-groups.ts'
export type { ErrorGroupView } from './jobs/error-groups.ts'
export { OperatorFixableError, isOperatorFixable } from './stages/stage-failures.ts'
export { clientMessage, internalErrorMessage } from './stages/client-message.ts'
