import {
  addCredits,
  createApiKey,
  revokeApiKey,
  createWorkspace,
  getErrorGroup,
  getWorkspace,
  listErrorGroups,
  listNotifications,
  rerunErrorGroup,
  updateWorkspace,
} from '@quire/core'
import { MAX_CREDITS } from '@quire/domain'
import { API_FORMS } from '@quire/forms'
import { z } from 'zod'
import {
  Balance,
  CreatedApiKey,
  ErrorGroup,
  ErrorGroupList,
  ErrorGroupRerun,
  NotificationList,
  RevokedApiKey,
  Workspace,
} from '../../openapi/resource-schemas.ts'
import { defineRoute } from '../route.ts'

/** A number of credits: what a balance (a PostgreSQL integer) can hold. */
const CreditAmount = z.number().int().min(0).max(MAX_CREDITS)

export const CreateWorkspace = z.object({
  name: z.string().min(1).max(200),
  api_form: z.enum(API_FORMS),
  credits: CreditAmount.optional(),
  spending_cap: CreditAmount.nullable().optional(),
})
export const CreateKey = z.object({ scopes: z.array(z.string()).min(1), pipeline_id: z.string().min(1).optional() })
export const Grant = z.object({ amount: CreditAmount.min(1) })
export const PatchWorkspace = z.object({
  spending_cap: CreditAmount.nullable().optional(),
  default_pipeline_id: z.string().min(1).nullable().optional(),
})

const WORKSPACE_ID = { id: 'Workspace id.' }
const ERROR_GROUP_ID = { id: 'Error group id.' }
export const ErrorGroupQuery = z.object({
  status: z.enum(['open', 'escalated', 'resolved']).optional(),
  workspace_id: z.string().min(1).optional(),
})

/** Operator API: workspaces, keys and credit grants, behind the admin token. */
export const ADMIN_ROUTES = [
  defineRoute<unknown, z.output<typeof CreateWorkspace>>({
    method: 'post',
    path: '/admin/v1/workspaces',
    operationId: 'adminCreateWorkspace',
    tag: 'Admin',
    summary: 'Create a workspace',
    description: '`api_form` is fixed at creation; every `/v1` request with the workspace’s keys is served in it.',
    auth: 'admin',
    body: { kind: 'json', name: 'AdminCreateWorkspaceRequest', schema: CreateWorkspace },
    responses: { '201': { description: 'Created.', name: 'Workspace', schema: Workspace } },
    handle: async ({ deps, body: b }) => ({
      status: 201,
      body: await createWorkspace({
        db: deps.db,
        name: b.name,
        apiForm: b.api_form,
        credits: b.credits,
        spendingCap: b.spending_cap,
      }),
    }),
  }),
  defineRoute({
    method: 'get',
    path: '/admin/v1/workspaces/{id}',
    operationId: 'adminGetWorkspace',
    tag: 'Admin',
    summary: 'Read a workspace',
    auth: 'admin',
    pathParams: WORKSPACE_ID,
    responses: { '200': { description: 'The workspace.', name: 'Workspace', schema: Workspace } },
    errors: ['not_found'],
    handle: async ({ deps, params }) => ({
      status: 200,
      body: await getWorkspace({ db: deps.db, workspaceId: params.id! }),
    }),
  }),
  defineRoute<unknown, z.output<typeof PatchWorkspace>>({
    method: 'patch',
    path: '/admin/v1/workspaces/{id}',
    operationId: 'adminUpdateWorkspace',
    tag: 'Admin',
    summary: 'Set the spending cap or default pipeline',
    auth: 'admin',
    pathParams: WORKSPACE_ID,
    body: { kind: 'json', name: 'AdminUpdateWorkspaceRequest', schema: PatchWorkspace },
    responses: { '200': { description: 'The workspace.', name: 'Workspace', schema: Workspace } },
    errors: ['not_found', 'PIPELINE_NOT_FOUND'],
    handle: async ({ deps, params, body: b }) => ({
      status: 200,
      body: await updateWorkspace({
        db: deps.db,
        workspaceId: params.id!,
        spendingCap: b.spending_cap,
        defaultPipelineId: b.default_pipeline_id,
      }),
    }),
  }),
  defineRoute<unknown, z.output<typeof CreateKey>>({
    method: 'post',
    path: '/admin/v1/workspaces/{id}/api-keys',
    operationId: 'adminCreateApiKey',
    tag: 'Admin',
    summary: 'Issue an API key',
    description: 'The key is shown once and stored hashed. With `pipeline_id` the key is bound to that pipeline.',
    auth: 'admin',
    pathParams: WORKSPACE_ID,
    body: { kind: 'json', name: 'AdminCreateApiKeyRequest', schema: CreateKey },
    responses: { '201': { description: 'Created.', name: 'CreatedApiKey', schema: CreatedApiKey } },
    errors: ['not_found', 'PIPELINE_NOT_FOUND'],
    handle: async ({ deps, params, body: b }) => ({
      status: 201,
      body: await createApiKey({ db: deps.db, workspaceId: params.id!, scopes: b.scopes, pipelineId: b.pipeline_id }),
    }),
  }),
  defineRoute({
    method: 'post',
    path: '/admin/v1/workspaces/{id}/api-keys/{key_id}/revoke',
    operationId: 'adminRevokeApiKey',
    tag: 'Admin',
    summary: 'Revoke an API key',
    description:
      'Every API process refuses the key (401) from its next request: keys are read on every request, never cached. ' +
      'Revoking a revoked key changes nothing.',
    auth: 'admin',
    pathParams: { ...WORKSPACE_ID, key_id: 'API key id, as its creation answered it.' },
    responses: { '200': { description: 'The key, revoked.', name: 'RevokedApiKey', schema: RevokedApiKey } },
    errors: ['not_found'],
    handle: async ({ deps, params }) => ({
      status: 200,
      body: await revokeApiKey({ db: deps.db, workspaceId: params.id!, keyId: params.key_id! }),
    }),
  }),
  defineRoute<unknown, z.output<typeof Grant>>({
    method: 'post',
    path: '/admin/v1/workspaces/{id}/credits',
    operationId: 'adminGrantCredits',
    tag: 'Admin',
    summary: 'Grant credits',
    auth: 'admin',
    pathParams: WORKSPACE_ID,
    body: { kind: 'json', name: 'AdminGrantCreditsRequest', schema: Grant },
    responses: { '200': { description: 'The balance after the grant.', name: 'Balance', schema: Balance } },
    errors: ['not_found'],
    handle: async ({ deps, params, body: b }) => ({
      status: 200,
      body: await addCredits({ db: deps.db, workspaceId: params.id!, amount: b.amount }),
    }),
  }),
  defineRoute({
    method: 'get',
    path: '/admin/v1/workspaces/{id}/notifications',
    operationId: 'adminListNotifications',
    tag: 'Admin',
    summary: 'Admin notifications',
    description: 'For example a Form B webhook that became `failing`. Newest first, at most 100.',
    auth: 'admin',
    pathParams: WORKSPACE_ID,
    responses: { '200': { description: 'Notifications.', name: 'NotificationList', schema: NotificationList } },
    errors: ['not_found'],
    handle: async ({ deps, params }) => {
      await getWorkspace({ db: deps.db, workspaceId: params.id! })
      return { status: 200, body: { data: await listNotifications({ db: deps.db, workspaceId: params.id! }) } }
    },
  }),
  defineRoute<z.output<typeof ErrorGroupQuery>>({
    method: 'get',
    path: '/admin/v1/error-groups',
    operationId: 'adminListErrorGroups',
    tag: 'Admin',
    summary: 'Error groups of blocked jobs',
    description:
      'Jobs parked by a failure an operator can fix (a destination refusing writes, blob storage or the OCR engine ' +
      'unavailable), grouped by (workspace, pipeline, stage, error code), newest first, with their job counts.',
    auth: 'admin',
    query: {
      schema: ErrorGroupQuery,
      docs: { status: 'Only groups in this status.', workspace_id: 'Only groups of this workspace.' },
    },
    responses: { '200': { description: 'Error groups.', name: 'ErrorGroupList', schema: ErrorGroupList } },
    handle: async ({ deps, query: q }) => ({
      status: 200,
      body: { data: await listErrorGroups({ db: deps.db, status: q.status, workspaceId: q.workspace_id }) },
    }),
  }),
  defineRoute({
    method: 'get',
    path: '/admin/v1/error-groups/{id}',
    operationId: 'adminGetErrorGroup',
    tag: 'Admin',
    summary: 'Read an error group',
    auth: 'admin',
    pathParams: ERROR_GROUP_ID,
    responses: { '200': { description: 'The error group.', name: 'ErrorGroup', schema: ErrorGroup } },
    errors: ['not_found'],
    handle: async ({ deps, params }) => ({
      status: 200,
      body: await getErrorGroup({ db: deps.db, groupId: params.id! }),
    }),
  }),
  defineRoute({
    method: 'post',
    path: '/admin/v1/error-groups/{id}/rerun',
    operationId: 'adminRerunErrorGroup',
    tag: 'Admin',
    summary: 'Re-run every blocked job of an error group',
    description:
      'After fixing the cause: each blocked job runs the stage that blocked it again, now. Jobs that get through ' +
      'leave the group; when none is left the group is resolved (`error_group.resolved`).',
    auth: 'admin',
    pathParams: ERROR_GROUP_ID,
    responses: { '200': { description: 'Queued.', name: 'ErrorGroupRerun', schema: ErrorGroupRerun } },
    errors: ['not_found', 'ERROR_GROUP_RESOLVED'],
    handle: async ({ deps, params }) => ({
      status: 200,
      body: await rerunErrorGroup({ db: deps.db, groupId: params.id!, onCommit: deps.kickRelay }),
    }),
  }),
]
