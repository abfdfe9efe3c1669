import { authenticateApiKey } from '@quire/core'
import { DomainError } from '@quire/domain'
import type { ApiForm } from '@quire/forms'
import { z } from 'zod'
import { baseUrl } from '../../http/context.ts'
import { buildOpenApi } from '../../openapi/build-openapi.ts'
import { DOCS_PAGE_HEADERS, renderDocsIndex, renderDocsPage } from '../../openapi/docs-page.ts'
import { defineRoute, type RouteInput, type RouteSpec } from '../route.ts'

/** `GET /v1/openapi.json` and `/docs`: `?form=A|B`; without it the API key decides. */
export const OpenApiQuery = z.object({
  form: z.enum(['A', 'B']).optional().describe('API form of the document; defaults to the form of the calling key.'),
})
type OpenApiQuery = z.output<typeof OpenApiQuery>

// Built once per form and route list: the document is a pure function of the declarations.
const built = new WeakMap<readonly RouteSpec[], Map<ApiForm, Record<string, unknown>>>()
function documentFor(routes: readonly RouteSpec[], form: ApiForm, serverUrl: string) {
  let byForm = built.get(routes)
  if (!byForm) built.set(routes, (byForm = new Map()))
  let doc = byForm.get(form)
  if (!doc) byForm.set(form, (doc = buildOpenApi(routes, form)))
  return { ...doc, servers: [{ url: serverUrl }] }
}

/** `?form=` when given, else the form of the `X-API-Key` (an invalid key is 401), else none. */
async function formOf({ ctx, deps, query }: RouteInput<OpenApiQuery>): Promise<ApiForm | null> {
  if (query.form) return query.form
  const key = ctx.get('X-API-Key')
  if (!key) return null
  const principal = await authenticateApiKey({ db: deps.db, key })
  if (!principal) throw new DomainError('unauthorized', 'invalid API key')
  return principal.apiForm
}

export const API_DESCRIPTION_ROUTES = [
  defineRoute<OpenApiQuery>({
    method: 'get',
    path: '/v1/openapi.json',
    operationId: 'getOpenApi',
    tag: 'API description',
    summary: 'This document',
    description: 'The OpenAPI 3.1 document of the calling key’s form; without a key, pass `form`. No scope needed.',
    auth: 'optional-key',
    query: { schema: OpenApiQuery },
    responses: {
      '200': { description: 'An OpenAPI 3.1 document.', json: { type: 'object', required: ['openapi', 'paths'] } },
    },
    handle: async (input) => {
      const form = await formOf(input)
      if (!form) {
        throw new DomainError('INVALID_PARAMETER', 'form: send an X-API-Key, or ?form=A or ?form=B', {
          issues: [{ path: 'form', message: 'required without an API key' }],
        })
      }
      return { status: 200, body: documentFor(input.routes, form, baseUrl(input.ctx, input.deps)) }
    },
  }),
  defineRoute<OpenApiQuery>({
    method: 'get',
    path: '/docs',
    operationId: 'getDocs',
    tag: 'API description',
    summary: 'API reference page',
    description:
      'This document rendered as HTML by Swagger UI, served from this API. Pass `form`; with neither a form nor a key it links to both.',
    auth: 'optional-key',
    query: { schema: OpenApiQuery },
    responses: { '200': { description: 'HTML page.', text: 'text/html' } },
    handle: async (input) => {
      const form = await formOf(input)
      const html = form
        ? renderDocsPage(documentFor(input.routes, form, baseUrl(input.ctx, input.deps)), form)
        : renderDocsIndex()
      return { status: 200, type: 'text/html; charset=utf-8', headers: DOCS_PAGE_HEADERS, body: html }
    },
  }),
]
