export const SCOPES = [
  'jobs:write',
  'jobs:read',
  'jobs:cancel',
  'webhook:write',
  'webhooks:write',
  'webhooks:read',
  'pipelines:read',
  'pipelines:write',
  'documents:read',
  'documents:review',
  'credits:read',
] as const
export type Scope = (typeof SCOPES)[number]
