import {
  createWebhook,
  deleteWebhook,
  getWebhook,
  listDeliveries,
  listWebhooks,
  rotateWebhookSecret,
  setWebhookStatus,
} from '@quire/core'
import {
  API_FORMS,
  type ApiForm,
  FormACreateWebhook,
  FormAWebhook,
  FormBCreateWebhook,
  FormBWebhook,
  FormBWebhookWithSecret,
  formProfile,
  NumberedPage,
  presentCursorPage,
} from '@quire/forms'
import type { Scope } from '@quire/domain'
import { z } from 'zod'
import { PageQuery } from '../../http/validate.ts'
import { DeliveryList } from '../../openapi/resource-schemas.ts'
import { PAGE_DOCS } from '../pipelines/pipelines.routes.ts'
import { type ByForm, byForm, defineRoute } from '../route.ts'

export const PatchWebhook = z.object({ status: z.enum(['active']) })
export const DeliveriesQuery = z.object({
  limit: z.coerce.number().int().min(1).max(100).default(25),
  cursor: z.string().min(1).optional(),
})

// Each form names the write scope its own way (its profile's `webhookWriteScope`; DESIGN: "`webhook:write` (Form A),
// `webhooks:write` (Form B)"), and only that name grants it: a key holding the other form's name lacks the scope (403).
const writeScopes = (form: ApiForm): Scope[] => [formProfile(form).webhookWriteScope]
const perForm = (scopes: (form: ApiForm) => Scope[]): ByForm<Scope[]> => ({
  byForm: Object.fromEntries(API_FORMS.map((f) => [f, scopes(f)])) as Record<ApiForm, Scope[]>,
})
const WRITE = perForm(writeScopes)
const READ = perForm((form) => ['webhooks:read', ...writeScopes(form)])
const WEBHOOK_ID = { id: 'Webhook id.' }
const Webhook = { A: FormAWebhook, B: FormBWebhook }
const WebhookWithSecret = { A: FormAWebhook, B: FormBWebhookWithSecret }
const reply = (status: string, description: string, name: string, schemas: typeof Webhook) =>
  byForm({
    A: { [status]: { description, name, schema: schemas.A } },
    B: { [status]: { description, name, schema: schemas.B } },
  })

export const WEBHOOK_ROUTES = [
  defineRoute({
    method: 'post',
    path: '/v1/webhooks',
    operationId: 'createWebhook',
    tag: 'Webhooks',
    summary: 'Create a webhook',
    description: byForm({
      A: 'The response carries `hmac_secret`, the signing secret, once; it reads back as `***`.',
      B: 'The response carries `secret`, the signing secret, once; it is never shown again.',
    }),
    auth: 'key',
    scopes: WRITE,
    body: byForm({
      A: { kind: 'json', name: 'CreateWebhookRequest', schema: FormACreateWebhook },
      B: { kind: 'json', name: 'CreateWebhookRequest', schema: FormBCreateWebhook },
    }),
    responses: reply('201', 'Created, with the signing secret.', 'WebhookWithSecret', WebhookWithSecret),
    errors: ['INVALID_WEBHOOK_URL', 'RESERVED_HEADER', 'INVALID_EVENT', 'WEBHOOK_NAME_CONFLICT'],
    handle: async ({ ctx, deps, principal, profile }) => {
      const parsed = profile.parseWebhook(ctx.request.body)
      const w = await createWebhook({
        db: deps.db,
        secrets: deps.secrets,
        workspaceId: principal.workspaceId,
        urlPolicy: deps.config.urlPolicy,
        ...parsed,
      })
      return { status: 201, body: profile.presentWebhook(w, { revealSecret: true }) }
    },
  }),
  defineRoute<z.output<typeof PageQuery>>({
    method: 'get',
    path: '/v1/webhooks',
    operationId: 'listWebhooks',
    tag: 'Webhooks',
    summary: 'List webhooks',
    description: 'Page-numbered: `page` ≥ 1 (default 1), `page_size` 1..100 (default 25).',
    auth: 'key',
    scopes: READ,
    query: { schema: PageQuery, docs: PAGE_DOCS },
    responses: byForm({
      A: {
        '200': {
          description: 'One page.',
          name: 'WebhookList',
          schema: z.object({ data: z.array(FormAWebhook), page: NumberedPage }),
        },
      },
      B: {
        '200': {
          description: 'One page.',
          name: 'WebhookList',
          schema: z.object({ data: z.array(FormBWebhook), page: NumberedPage }),
        },
      },
    }),
    handle: async ({ deps, principal, profile, query: q }) => {
      const res = await listWebhooks({
        db: deps.db,
        workspaceId: principal.workspaceId,
        page: q.page,
        pageSize: q.page_size,
      })
      return {
        status: 200,
        body: {
          data: res.data.map((w) => profile.presentWebhook(w, { revealSecret: false })),
          page: { page: q.page, page_size: q.page_size, total: res.total },
        },
      }
    },
  }),
  defineRoute({
    method: 'get',
    path: '/v1/webhooks/{id}',
    operationId: 'getWebhook',
    tag: 'Webhooks',
    summary: 'Read a webhook',
    auth: 'key',
    scopes: READ,
    pathParams: WEBHOOK_ID,
    responses: byForm({
      A: { '200': { description: 'The webhook; the secret reads `***`.', name: 'Webhook', schema: FormAWebhook } },
      B: { '200': { description: 'The webhook, without its secret.', name: 'Webhook', schema: FormBWebhook } },
    }),
    errors: ['not_found'],
    handle: async ({ deps, principal, profile, params }) => {
      const w = await getWebhook({ db: deps.db, workspaceId: principal.workspaceId, webhookId: params.id! })
      return { status: 200, body: profile.presentWebhook(w, { revealSecret: false }) }
    },
  }),
  defineRoute<unknown, z.output<typeof PatchWebhook>>({
    method: 'patch',
    path: '/v1/webhooks/{id}',
    operationId: 'updateWebhook',
    tag: 'Webhooks',
    summary: 'Re-enable a webhook',
    description: '`{status: "active"}` re-enables a `failing` webhook.',
    auth: 'key',
    scopes: WRITE,
    pathParams: WEBHOOK_ID,
    body: { kind: 'json', name: 'UpdateWebhookRequest', schema: PatchWebhook },
    responses: reply('200', 'The webhook.', 'Webhook', Webhook),
    errors: ['not_found'],
    handle: async ({ deps, principal, profile, params, body }) => {
      const w = await setWebhookStatus({
        db: deps.db,
        workspaceId: principal.workspaceId,
        webhookId: params.id!,
        status: body.status,
      })
      return { status: 200, body: profile.presentWebhook(w, { revealSecret: false }) }
    },
  }),
  defineRoute({
    method: 'delete',
    path: '/v1/webhooks/{id}',
    operationId: 'deleteWebhook',
    tag: 'Webhooks',
    summary: 'Delete a webhook',
    description:
      'Deletes the webhook with its deliveries: nothing more is sent to it, retries already scheduled included. Pipeline versions that bind it fire nothing for it; a new definition may not bind it. Its name can be used again. No request body.',
    auth: 'key',
    scopes: WRITE,
    pathParams: WEBHOOK_ID,
    responses: { '204': { description: 'Deleted.' } },
    errors: ['not_found'],
    handle: async ({ deps, principal, params }) => {
      await deleteWebhook({ db: deps.db, workspaceId: principal.workspaceId, webhookId: params.id! })
      return { status: 204, body: null }
    },
  }),
  defineRoute({
    method: 'post',
    path: '/v1/webhooks/{id}/rotate',
    operationId: 'rotateWebhookSecret',
    tag: 'Webhooks',
    summary: 'Rotate the signing secret',
    description: 'Issues a new signing secret, returned once. No request body.',
    auth: 'key',
    scopes: WRITE,
    pathParams: WEBHOOK_ID,
    responses: reply('200', 'The webhook with its new secret.', 'WebhookWithSecret', WebhookWithSecret),
    errors: ['not_found'],
    handle: async ({ deps, principal, profile, params }) => {
      const w = await rotateWebhookSecret({
        db: deps.db,
        secrets: deps.secrets,
        workspaceId: principal.workspaceId,
        webhookId: params.id!,
      })
      return { status: 200, body: profile.presentWebhook(w, { revealSecret: true }) }
    },
  }),
  defineRoute<z.output<typeof DeliveriesQuery>>({
    method: 'get',
    path: '/v1/webhooks/{id}/deliveries',
    operationId: 'listWebhookDeliveries',
    tag: 'Webhooks',
    summary: 'List deliveries',
    description:
      'Deliveries, newest first, keyset-paginated like jobs; each with its attempts (status, response code, duration, error) and next retry.',
    auth: 'key',
    scopes: READ,
    pathParams: WEBHOOK_ID,
    query: {
      schema: DeliveriesQuery,
      docs: {
        limit: 'Page size, 1..100.',
        cursor: '`page.next_cursor` of the previous page; omit for the first page.',
      },
    },
    responses: { '200': { description: 'Deliveries.', name: 'DeliveryList', schema: DeliveryList } },
    errors: ['not_found'],
    handle: async ({ deps, principal, params, query }) => {
      const deliveries = await listDeliveries({
        db: deps.db,
        workspaceId: principal.workspaceId,
        webhookId: params.id!,
        limit: query.limit,
        cursor: query.cursor,
      })
      return {
        status: 200,
        body: {
          data: deliveries.data,
          page: presentCursorPage(deliveries),
        },
      }
    },
  }),
]
