export { DomainError, isDomainError } from './domain-error.ts'
export type { DomainErrorCode } from './domain-error.ts'
export { parseInput, isStorableText, unstorableText, LONE_SURROGATES } from './parse-input.ts'
export {
  STAGES,
  WORKER_STAGES,
  PER_DOCUMENT_STAGES,
  isStage,
  isWorkerStage,
  nextStage,
  stagePosition,
} from './stages.ts'
export type { Stage, WorkerStage } from './stages.ts'
export {
  JOB_STATUSES,
  FINAL_JOB_STATUSES,
  isFinalStatus,
  endedWithoutResult,
  canTransition,
  isCancellable,
} from './job-status.ts'
export type { JobStatus } from './job-status.ts'
export { newId, documentIdFor, childDocumentIdFor, holdIdFor, jobIdOfDocumentId } from './ids.ts'
export { creditsForPages, MAX_CREDITS } from './credits.ts'
export { PARKED_DOCUMENT_STATUSES, isUndeliveredDocument } from './document-status.ts'
export {
  FILE_TYPES,
  DOCUMENT_LANGUAGES,
  PLATFORM_MAX_FILE_MB,
  PipelineDefinition,
  ExtractionSchema,
  SchemaField,
  parsePipelineDefinition,
  boundWebhookIds,
} from './pipeline-definition.ts'
export type { FileType, DocumentLanguage, PipelineDefinitionInput, DefinitionIssue } from './pipeline-definition.ts'
export { SCOPES } from './scopes.ts'
export type { Scope } from './scopes.ts'
