import Router, { type RouterContext } from '@koa/router'
import { authenticateApiKey } from '@quire/core'
import { DomainError } from '@quire/domain'
import { baseUrl, type AppDeps, type Ctx } from '../../http/context.ts'
import { first, parseInput } from '../../http/validate.ts'
import { buildOpenApi, OpenApiQuery, type ApiForm } from '../../openapi/build-openapi.ts'
import { renderDocsHtml, renderDocsIndex } from '../../openapi/render-docs.ts'

/**
 * `GET /v1/openapi.json` and `GET /docs`, mounted before the authenticated /v1 router: they work without a key.
 * Form: `?form=A|B` when given, else the form of the `X-API-Key` (an invalid key is 401), else — for the JSON — 400.
 */
export function openApiRoutes(deps: AppDeps): Router {
  const router = new Router()
  const built = new Map<ApiForm, Record<string, unknown>>()
  const document = (form: ApiForm, serverUrl: string) => {
    let doc = built.get(form)
    if (!doc) built.set(form, (doc = buildOpenApi(form)))
    return { ...doc, servers: [{ url: serverUrl }] }
  }

  async function formOf(ctx: RouterContext): Promise<ApiForm | null> {
    const { form } = parseInput(OpenApiQuery, { form: first(ctx.query.form) })
    if (form) return form
    const key = ctx.get('X-API-Key')
    if (!key) return null
    const principal = await authenticateApiKey({ db: deps.db, key })
    if (!principal) throw new DomainError('unauthorized', 'invalid API key')
    return principal.apiForm
  }

  router.get('/v1/openapi.json', async (ctx) => {
    const form = await formOf(ctx)
    if (!form) {
      throw new DomainError('INVALID_PARAMETER', 'form: send an X-API-Key, or ?form=A or ?form=B', {
        issues: [{ path: 'form', message: 'required without an API key' }],
      })
    }
    ctx.body = document(form, baseUrl(ctx as unknown as Ctx, deps))
  })

  router.get('/docs', async (ctx) => {
    const form = await formOf(ctx)
    ctx.type = 'text/html; charset=utf-8'
    ctx.body = form ? renderDocsHtml(document(form, baseUrl(ctx as unknown as Ctx, deps))) : renderDocsIndex()
  })

  return router
}
