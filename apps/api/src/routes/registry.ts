import { ADMIN_ROUTES } from './admin/admin.routes.ts'
import { CREDIT_ROUTES } from './credits/credits.routes.ts'
import { DOCUMENT_ROUTES } from './documents/documents.routes.ts'
import { JOB_ROUTES } from './jobs/jobs.routes.ts'
import { API_DESCRIPTION_ROUTES } from './misc/api-description.routes.ts'
import { OPERATIONS_ROUTES } from './misc/operations.routes.ts'
import { PIPELINE_ROUTES } from './pipelines/pipelines.routes.ts'
import type { RouteSpec } from './route.ts'
import { WEBHOOK_ROUTES } from './webhooks/webhooks.routes.ts'

/**
 * Every endpoint Quire serves, in the order the API description lists them. Adding an endpoint is one declaration
 * in its resource's routes file (plus, if new, one line here): routing, auth, validation and OpenAPI follow.
 */
export const ROUTES: readonly RouteSpec[] = [
  ...JOB_ROUTES,
  ...PIPELINE_ROUTES,
  ...WEBHOOK_ROUTES,
  ...DOCUMENT_ROUTES,
  ...CREDIT_ROUTES,
  ...API_DESCRIPTION_ROUTES,
  ...OPERATIONS_ROUTES,
  ...ADMIN_ROUTES,
]
