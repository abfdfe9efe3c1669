import { mkdtempSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import type { CreatedApiKey as CoreApiKey, listDeliveries, WorkspaceView } from '@quire/core'
import { DomainError } from '@quire/domain'
import {
  buildFormAPayload,
  buildFormBPayload,
  presentFormAJob,
  presentFormAJobCreated,
  presentFormAWebhook,
  presentFormBJob,
  presentFormBSubmitted,
  presentFormBWebhook,
  presentPipeline,
} from '@quire/forms'
import type { Balance as LedgerBalance, LedgerEntryView } from '@quire/ledger'
import type Koa from 'koa'
import { describe, expect, it } from 'vitest'
import type { z } from 'zod'
import { jobs, pipelines, webhooks } from '../../../../packages/forms/src/presenter-samples.test-helper.ts'
import { createApp } from '../app.ts'
import { errorResponse } from '../http/errors.ts'
import type { ApiForm } from '@quire/forms'
import { ROUTES } from '../routes/registry.ts'
import { buildOpenApi } from './build-openapi.ts'
import { DOMAIN_ERROR_CODES, errorInfo, FlatError, NestedError } from './error-schemas.ts'
import { openApiValidator } from './openapi-validator.test-helper.ts'
import { DOCS_ASSETS, renderDocsIndex, renderDocsPage } from './docs-page.ts'
import type { Balance, CreatedApiKey, Delivery, LedgerEntry, Workspace } from './resource-schemas.ts'
import { testAppDeps } from '../http/app-deps.test-helper.ts'

type Json = Record<string, any>
const FORMS: ApiForm[] = ['A', 'B']
const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace']

// Compile-time: what the use-cases return fits the response schemas of the endpoints that return it unchanged.
type Fits<T, S extends z.ZodType> = T extends z.output<S> ? true : false
const fits: [
  Fits<LedgerBalance, typeof Balance>,
  Fits<WorkspaceView, typeof Workspace>,
  Fits<CoreApiKey, typeof CreatedApiKey>,
  Fits<Awaited<ReturnType<typeof listDeliveries>>['data'][number], typeof Delivery>,
  Fits<LedgerEntryView, typeof LedgerEntry>,
] = [true, true, true, true, true]
void fits

function refsIn(node: unknown, out: string[] = []): string[] {
  if (Array.isArray(node)) node.forEach((n) => refsIn(n, out))
  else if (node && typeof node === 'object') {
    for (const [k, v] of Object.entries(node)) {
      if (k === '$ref' && typeof v === 'string') out.push(v)
      else refsIn(v, out)
    }
  }
  return out
}

const resolve = (doc: Json, ref: string) =>
  ref
    .replace(/^#\//, '')
    .split('/')
    .map((p) => p.replace(/~1/g, '/').replace(/~0/g, '~'))
    .reduce<any>((n, p) => n?.[p], doc)

function operationsOf(doc: Json) {
  return Object.entries(doc.paths as Record<string, Json>).flatMap(([p, item]) =>
    Object.entries(item)
      .filter(([m]) => METHODS.includes(m))
      .map(([method, op]) => ({ path: p, method, op: op as Json })),
  )
}

describe.each(FORMS)('OpenAPI document, Form %s', (form) => {
  const doc = buildOpenApi(ROUTES, form, { serverUrl: 'https://quire.example' }) as Json

  it('is OpenAPI 3.1 with the API-key scheme in the X-API-Key header', () => {
    expect(doc.openapi).toMatch(/^3\.1\.\d+$/)
    expect(doc.info.title).toContain(`Form ${form}`)
    expect(doc.components.securitySchemes.ApiKey).toEqual(
      expect.objectContaining({ type: 'apiKey', in: 'header', name: 'X-API-Key' }),
    )
    expect(doc.servers).toEqual([{ url: 'https://quire.example' }])
  })

  it('describes DESIGN review.hold in the pipeline definition: "job" (the default) or "document"', () => {
    const hold = doc.components.schemas.PipelineDefinition.properties.review.properties.hold
    expect(hold).toMatchObject({ enum: ['job', 'document'], default: 'job' })
  })

  it('has unique operation ids, declared path parameters, a success and described responses everywhere', () => {
    const ops = operationsOf(doc)
    const ids = ops.map((o) => o.op.operationId)
    expect(new Set(ids).size).toBe(ids.length)
    for (const { path: p, method, op } of ops) {
      const where = `${method.toUpperCase()} ${p}`
      const templated = [...p.matchAll(/\{(\w+)\}/g)].map((m) => m[1]).sort()
      const declared = (op.parameters ?? [])
        .filter((x: Json) => x.in === 'path')
        .map((x: Json) => x.name)
        .sort()
      expect(declared, where).toEqual(templated)
      expect(
        Object.keys(op.responses).some((s) => s.startsWith('2')),
        where,
      ).toBe(true)
      for (const [status, r] of Object.entries(op.responses as Record<string, Json>)) {
        expect(r.description, `${where} ${status}`).toBeTruthy()
        if (Number(status) >= 400)
          expect(refsIn(r.content)).toEqual(expect.arrayContaining([expect.stringMatching(/(Flat|Nested)Error$/)]))
      }
      if (
        op.security?.some((s: Json) => 'ApiKey' in s) &&
        !op.security.some((s: Json) => Object.keys(s).length === 0)
      ) {
        expect(op.responses['401'], `${where} documents 401`).toBeDefined()
        expect(op.responses['403'], `${where} documents 403`).toBeDefined()
      }
    }
  })

  it('resolves every $ref, and every schema compiles as JSON Schema 2020-12', () => {
    for (const ref of refsIn(doc)) expect(resolve(doc, ref), ref).toBeDefined()
    const v = openApiValidator(doc)
    for (const name of Object.keys(doc.components.schemas)) expect(() => v.schemaErrors(name, null), name).not.toThrow()
  })

  it('documents exactly the routes the Koa routers serve', () => {
    const uploadDir = mkdtempSync(path.join(os.tmpdir(), 'quire-openapi-'))
    const deps = testAppDeps({ config: { uploadDir } })
    const app = createApp(deps)
    type Layer = { path: string; methods: string[] }
    const layers = (app.middleware as (Koa.Middleware & { router?: { stack: Layer[] } })[]).flatMap(
      (m) => m.router?.stack ?? [],
    )
    const normal = (p: string) => p.replace(/:\w+/g, '{}').replace(/\{\w+\}/g, '{}')
    const served = new Set(
      layers.flatMap((l) => l.methods.filter((m) => m !== 'HEAD').map((m) => `${m} ${normal(l.path)}`)),
    )
    const documented = new Set(ROUTES.map((r) => normal(`${r.method.toUpperCase()} ${r.path}`)))
    expect(served.size).toBeGreaterThan(10)
    // A route without documentation, or documentation of a route that does not exist, fails here.
    expect([...served].filter((r) => !documented.has(r)).sort(), 'served but not documented').toEqual([])
    expect([...documented].filter((r) => !served.has(r)).sort(), 'documented but not served').toEqual([])
    const inDoc = new Set(operationsOf(doc).map((o) => `${o.method.toUpperCase()} ${normal(o.path)}`))
    expect(inDoc).toEqual(documented)
  })

  it('validates what the presenters return against the generated JSON Schema', () => {
    const v = openApiValidator(doc)
    const ok = (name: string, value: unknown) =>
      expect(v.schemaErrors(name, value), `${name}: ${JSON.stringify(value)}`).toEqual([])
    for (const job of Object.values(jobs)) {
      if (form === 'A') {
        ok('JobCreated', presentFormAJobCreated(job))
        ok('Job', presentFormAJob(job))
      } else {
        for (const stages of [false, true])
          for (const result of [false, true]) ok('Job', presentFormBJob(job, { stages, result }))
        ok('SubmitAccepted', [
          presentFormBSubmitted(job, 'https://quire.example'),
          presentFormBJob(job, { stages: true, result: true }),
        ])
      }
    }
    for (const w of webhooks) {
      ok(
        'WebhookWithSecret',
        form === 'A' ? presentFormAWebhook(w, { revealSecret: true }) : presentFormBWebhook(w, { revealSecret: true }),
      )
      ok(
        'Webhook',
        form === 'A'
          ? presentFormAWebhook(w, { revealSecret: false })
          : presentFormBWebhook(w, { revealSecret: false }),
      )
    }
    for (const p of pipelines) ok('Pipeline', presentPipeline(p, form))
    // The closed schemas reject what the presenters never write.
    expect(
      v.schemaErrors('Job', {
        ...presentFormAJob(jobs.completed!),
        ...presentFormBJob(jobs.completed!, { stages: true, result: true }),
      }),
    ).not.toEqual([])
  })

  it('describes the outbound deliveries (webhooks section), and what the payload builders make validates against it', () => {
    const v = openApiValidator(doc)
    const name = form === 'A' ? 'FormAWebhookPayload' : 'FormBWebhookPayload'
    expect(JSON.stringify(doc.webhooks.delivery.post.requestBody)).toContain(`#/components/schemas/${name}`)
    const job = jobs.completed!
    const event = (type: string, stage: string | null, transition: string | null) => ({
      id: 'evt_1',
      type,
      workspaceId: 'ws_1',
      jobId: job.id,
      documentId: null,
      stage,
      transition,
      data: {},
      createdAt: new Date('2026-03-01T10:00:00.000Z'),
    })
    const payloads =
      form === 'A'
        ? [
            ['parse.exited', event('stage.exited', 'parse', 'exited')],
            ['destination.exited', event('stage.exited', 'destination', 'exited')],
            ['extract.entered', event('stage.entered', 'extract', 'entered')],
            ['job.failed', event('job.failed', null, null)],
          ].map(([type, e]) =>
            buildFormAPayload({
              deliveryId: 'dlv_1',
              type: type as string,
              event: e as never,
              job,
              baseUrl: 'https://quire.example',
            }),
          )
        : [
            ['job.started', event('job.started', null, null)],
            ['job.completed', event('job.completed', null, null)],
            ['job.failed', event('job.failed', null, null)],
          ].map(([type, e]) =>
            buildFormBPayload({ deliveryId: 'dlv_1', type: type as string, event: e as never, job, webhookId: 'wh_1' }),
          )
    for (const p of payloads) expect(v.schemaErrors(name, p), JSON.stringify(p)).toEqual([])
    expect(v.schemaErrors(name, { ...payloads[0], surprise: 1 })).not.toEqual([])
  })

  it('documents request bodies from the route schemas, with files as binary parts', () => {
    const submit = doc.paths['/v1/jobs'].post.requestBody.content
    const multipart = resolve(doc, submit['multipart/form-data'].schema.$ref)
    const field = form === 'A' ? 'file' : 'files'
    expect(multipart.properties[field]).toMatchObject({ type: 'array', items: { type: 'string', format: 'binary' } })
    expect(multipart.required).toContain(field)
    expect(Object.keys(multipart.properties)).toEqual(
      expect.arrayContaining(
        form === 'A'
          ? ['pipeline_id', 'version', 'source_tag', 'metadata', 'run_kind']
          : ['pipeline_id', 'pipeline_version', 'schema_id', 'priority', 'client_reference_id', 'environment', 'mode'],
      ),
    )
    if (form === 'A') expect(submit['application/json']).toBeDefined()
    const webhook = resolve(doc, doc.paths['/v1/webhooks'].post.requestBody.content['application/json'].schema.$ref)
    expect(webhook.required).toEqual(
      expect.arrayContaining(form === 'A' ? ['name', 'url', 'auth_type'] : ['name', 'url']),
    )
    const list = doc.paths['/v1/jobs'].get.parameters.find((p: Json) => p.name === 'limit')
    expect(list.schema).toMatchObject({ type: 'integer', minimum: 1, maximum: 100, default: 25 })
  })

  it('gives the spec’s error codes their status and envelope', () => {
    const responses = doc.paths['/v1/jobs'].post.responses
    const codes = (status: number) => JSON.stringify(responses[status].content)
    expect(codes(400)).toContain('MISSING_PART')
    expect(codes(402)).toContain('PAYMENT_REQUIRED')
    expect(codes(413)).toContain('FILE_TOO_LARGE')
    expect(codes(422)).toContain('UNSUPPORTED_FILE_TYPE')
    expect(codes(401)).toContain('NestedError')
    expect(JSON.stringify(doc.paths['/v1/jobs/{job_id}'].get.responses['404'].content)).toMatch(
      /NestedError.*job_not_found/,
    )
    expect(JSON.stringify(doc.paths['/v1/webhooks'].post.responses['409'].content)).toContain('WEBHOOK_NAME_CONFLICT')
  })

  it("documents the 500 of every operation (DESIGN, Robustness: a stable code for Quire's own faults)", () => {
    for (const [path, ops] of Object.entries(
      doc.paths as Record<string, Record<string, { responses: Record<string, unknown> }>>,
    )) {
      for (const [method, op] of Object.entries(ops)) {
        expect(JSON.stringify(op.responses['500']), `${method} ${path}`).toContain('"INTERNAL"')
      }
    }
  })

  it('puts the whole document in the /docs page as a data block, and loads only its own assets, no inline script', () => {
    const html = renderDocsPage(doc, 'A')
    expect(html).toMatch(/^<!doctype html>/)
    const block = /<script type="application\/json" id="openapi-document">(.*?)<\/script>/s.exec(html)
    expect(JSON.parse(block![1]!)).toEqual(doc)
    const scripts = [...html.matchAll(/<script([^>]*)>(.*?)<\/script>/gs)]
    expect(scripts.map((m) => m[1])).toEqual([
      ' type="application/json" id="openapi-document"',
      ` src="${DOCS_ASSETS}/swagger-ui-bundle.js"`,
      ` src="${DOCS_ASSETS}/docs.js"`,
    ])
    for (const [, , body] of scripts.slice(1)) expect(body).toBe('')
    for (const [, url] of html.matchAll(/(?:src|href)="([^"]*)"/g)) expect(url).toMatch(/^(\/|\?form=)/)
    expect(html).not.toMatch(/<style|style=/i)
  })

  it('a document cannot end its data block early', () => {
    const html = renderDocsPage({ ...doc, info: { title: 'x</script><script>alert(1)</script>' } }, 'B')
    expect(html.match(/<\/script>/g)).toHaveLength(3)
    const block = /<script type="application\/json" id="openapi-document">(.*?)<\/script>/s.exec(html)
    expect(JSON.parse(block![1]!).info.title).toBe('x</script><script>alert(1)</script>')
  })
})

describe('error envelopes', () => {
  it('every domain error code renders in the envelope its schema describes', () => {
    const v = openApiValidator(buildOpenApi(ROUTES, 'A'))
    for (const code of DOMAIN_ERROR_CODES) {
      const { body } = errorResponse(new DomainError(code, 'message', { issues: [] }))
      const info = errorInfo(code)
      const schema = info.envelope === 'flat' ? FlatError : NestedError
      expect(schema.parse(body), code).toEqual(body)
      expect(v.schemaErrors(info.envelope === 'flat' ? 'FlatError' : 'NestedError', body), code).toEqual([])
    }
    expect(errorInfo('job_not_found')).toMatchObject({ status: 404, envelope: 'nested' })
    expect(errorInfo('PIPELINE_FILE_TOO_LARGE')).toMatchObject({
      status: 422,
      wireCode: 'FILE_TOO_LARGE',
      envelope: 'flat',
    })
  })

  it('the /docs index links both forms', () => {
    expect(renderDocsIndex()).toContain('href="?form=A"')
    expect(renderDocsIndex()).toContain('href="?form=B"')
  })
})
