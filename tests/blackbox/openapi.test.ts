// API description, black box: GET /v1/openapi.json serves an OpenAPI 3.1 document per form (the key's form, or
// ?form= without a key) and /docs renders it. Then real requests in each form — submit a PDF, poll the job to
// completed, list, read the document and the credits, create and read a webhook, and the errors of the spec's table —
// and every real response body is validated (JSON Schema 2020-12, ajv) against the document's schema for that path,
// method and status, with objects closed so an undocumented field fails too. The admin API is in both documents:
// a real error group (a job parked at a destination directory that cannot be written) is read, listed and re-run.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import nodePath from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { openApiValidator, type OpenApiValidator } from '../../apps/api/src/openapi/openapi-validator.test-helper.ts'
import { invoicePdf } from '../fixtures/make-fixtures.ts'
import { call, fileForm, newWorkspace, pollUntil, type Res } from './client.ts'
import { startStack, type Stack } from './stack.ts'

let stack: Stack
let dir: string
/** The destination's path: a file while the test wants jobs to block there, removed to fix it. */
const blocked = () => nodePath.join(dir, 'blocked')

beforeAll(async () => {
  dir = mkdtempSync(nodePath.join(os.tmpdir(), 'quire-openapi-'))
  stack = await startStack({
    env: {
      QUIRE_DESTINATIONS: JSON.stringify({ blocked: { type: 'dir', path: blocked() } }),
      QUIRE_SWEEP_INTERVAL_MS: '500',
    },
  })
}, 120_000)

afterAll(async () => {
  await stack?.stop()
  if (dir) rmSync(dir, { recursive: true, force: true })
})

const FINAL_B = ['completed', 'completed_with_errors', 'failed', 'timed_out', 'cancelled']

/** Asserts the response's status and that its body matches the document for `method path` and that status. */
function conforms(v: OpenApiValidator, res: Res, method: string, path: string, status: number) {
  expect(res.status, `${method} ${path}: ${JSON.stringify(res.body)}`).toBe(status)
  expect(
    v.responseErrors(path, method, res.status, res.body),
    `${method} ${path} ${status}: ${JSON.stringify(res.body)}`,
  ).toEqual([])
}

describe('GET /v1/openapi.json and /docs', () => {
  it('serves OpenAPI 3.1 for ?form=A and ?form=B without a key, and the key’s form with one', async () => {
    for (const form of ['A', 'B'] as const) {
      const res = await call(stack.baseUrl, 'GET', `/v1/openapi.json?form=${form}`)
      expect(res.status).toBe(200)
      expect(res.headers.get('content-type')).toMatch(/application\/json/)
      expect(res.body.openapi).toMatch(/^3\.1\.\d+$/)
      expect(res.body.info.title).toContain(`Form ${form}`)
      expect(res.body.servers).toEqual([{ url: stack.baseUrl }])
      expect(Object.keys(res.body.paths)).toEqual(
        expect.arrayContaining([
          '/v1/jobs',
          '/v1/jobs/{job_id}',
          '/v1/jobs/{job_id}/cancel',
          '/v1/pipelines',
          '/v1/webhooks',
          '/v1/documents/{id}',
          '/v1/credits',
        ]),
      )
      expect(res.body.components.securitySchemes.ApiKey).toMatchObject({
        type: 'apiKey',
        in: 'header',
        name: 'X-API-Key',
      })

      const { key } = await newWorkspace(stack.baseUrl, form)
      const keyed = await call(stack.baseUrl, 'GET', '/v1/openapi.json', { key })
      expect(keyed.status).toBe(200)
      expect(keyed.body.info.title).toContain(`Form ${form}`)
      expect(keyed.body).toEqual(res.body)
    }
    // The two forms really differ where the spec says they do.
    const a = (await call(stack.baseUrl, 'GET', '/v1/openapi.json?form=A')).body
    const b = (await call(stack.baseUrl, 'GET', '/v1/openapi.json?form=B')).body
    expect(a.components.schemas.SubmitJobRequest.properties).toHaveProperty('file')
    expect(b.components.schemas.SubmitJobRequest.properties).toHaveProperty('files')
    expect(a.components.schemas.WebhookWithSecret.properties).toHaveProperty('hmac_secret')
    expect(b.components.schemas.WebhookWithSecret.properties).toHaveProperty('secret')
  })

  it('answers a missing or unknown form with 400 INVALID_PARAMETER and a bad key with 401, as documented', async () => {
    const v = openApiValidator((await call(stack.baseUrl, 'GET', '/v1/openapi.json?form=B')).body)
    const none = await call(stack.baseUrl, 'GET', '/v1/openapi.json')
    conforms(v, none, 'GET', '/v1/openapi.json', 400)
    expect(none.body.error).toBe('INVALID_PARAMETER')
    const bad = await call(stack.baseUrl, 'GET', '/v1/openapi.json?form=C')
    conforms(v, bad, 'GET', '/v1/openapi.json', 400)
    expect(bad.body.error).toBe('INVALID_PARAMETER')
    const wrongKey = await call(stack.baseUrl, 'GET', '/v1/openapi.json', { key: 'qk_not-a-key' })
    conforms(v, wrongKey, 'GET', '/v1/openapi.json', 401)
    expect(wrongKey.body.error.code).toBe('unauthorized')
  })

  it('answers /docs with the reference page of the form asked for or of the key, under a strict CSP', async () => {
    const documentIn = (html: string) =>
      JSON.parse(/<script type="application\/json" id="openapi-document">(.*?)<\/script>/s.exec(html)![1]!)
    for (const form of ['A', 'B'] as const) {
      const served = (await call(stack.baseUrl, 'GET', `/v1/openapi.json?form=${form}`)).body
      const res = await fetch(`${stack.baseUrl}/docs?form=${form}`)
      expect(res.status).toBe(200)
      expect(res.headers.get('content-type')).toMatch(/text\/html/)
      expect(res.headers.get('content-security-policy')).toMatch(/^default-src 'none'; script-src 'self';/)
      const html = await res.text()
      expect(html).toContain(`<title>Quire API (Form ${form})`)
      expect(documentIn(html)).toEqual(served)
      expect(html).toContain('<script src="/docs/assets/swagger-ui-bundle.js"></script>')

      const { key } = await newWorkspace(stack.baseUrl, form)
      const keyed = await fetch(`${stack.baseUrl}/docs`, { headers: { 'X-API-Key': key } })
      expect(keyed.status).toBe(200)
      expect(documentIn(await keyed.text())).toEqual(served)
    }
    const index = await fetch(`${stack.baseUrl}/docs`)
    expect(index.status).toBe(200)
    const html = await index.text()
    expect(html).toContain('href="?form=B"')
    expect(html).not.toMatch(/<script/i)
  })
})

describe('real responses match the document, Form A', () => {
  it('pipelines, submission, job reads, list, documents, credits, webhooks and errors', async () => {
    const v = openApiValidator((await call(stack.baseUrl, 'GET', '/v1/openapi.json?form=A')).body)
    const { key } = await newWorkspace(stack.baseUrl, 'A', { credits: 100 })
    const pdf = await invoicePdf()

    const pipeline = await call(stack.baseUrl, 'POST', '/v1/pipelines', {
      key,
      json: {
        name: 'invoices',
        definition: { document_types: [{ name: 'invoice', keywords: ['invoice'], schema_id: 'invoice' }] },
      },
    })
    conforms(v, pipeline, 'POST', '/v1/pipelines', 201)
    const pipelineId = pipeline.body.id as string

    // spec: an unpublished pipeline is rejected, 400 PIPELINE_NOT_PUBLISHED
    const unpublished = await call(stack.baseUrl, 'POST', '/v1/jobs', {
      key,
      form: fileForm('file', [{ name: 'i.pdf', bytes: pdf }], { pipeline_id: pipelineId }),
    })
    conforms(v, unpublished, 'POST', '/v1/jobs', 400)
    expect(unpublished.body.error).toBe('PIPELINE_NOT_PUBLISHED')

    conforms(
      v,
      await call(stack.baseUrl, 'POST', `/v1/pipelines/${pipelineId}/versions/v1/publish`, { key }),
      'POST',
      '/v1/pipelines/{id}/versions/{n}/publish',
      200,
    )
    conforms(
      v,
      await call(stack.baseUrl, 'POST', `/v1/pipelines/${pipelineId}/versions`, { key, json: {} }),
      'POST',
      '/v1/pipelines/{id}/versions',
      201,
    )
    conforms(
      v,
      await call(stack.baseUrl, 'GET', `/v1/pipelines/${pipelineId}`, { key }),
      'GET',
      '/v1/pipelines/{id}',
      200,
    )
    conforms(v, await call(stack.baseUrl, 'GET', '/v1/pipelines', { key }), 'GET', '/v1/pipelines', 200)

    const submit = await call(stack.baseUrl, 'POST', '/v1/jobs', {
      key,
      form: fileForm('file', [{ name: 'invoice.pdf', bytes: pdf, type: 'application/pdf' }], {
        pipeline_id: pipelineId,
        source_tag: 'openapi',
        metadata: JSON.stringify({ po: '42' }),
      }),
    })
    conforms(v, submit, 'POST', '/v1/jobs', 202)
    const jobId = submit.body.id as string

    const first = await call(stack.baseUrl, 'GET', `/v1/jobs/${jobId}`, { key })
    conforms(v, first, 'GET', '/v1/jobs/{job_id}', 200)
    const done = await pollUntil(
      () => call(stack.baseUrl, 'GET', `/v1/jobs/${jobId}`, { key }),
      (r) => r.body.status !== 'processing',
    )
    conforms(v, done, 'GET', '/v1/jobs/{job_id}', 200)
    expect(done.body.status).toBe('completed')

    conforms(v, await call(stack.baseUrl, 'GET', '/v1/jobs?limit=10', { key }), 'GET', '/v1/jobs', 200)
    conforms(
      v,
      await call(stack.baseUrl, 'GET', `/v1/documents/${done.body.documents[0].id}`, { key }),
      'GET',
      '/v1/documents/{id}',
      200,
    )
    conforms(v, await call(stack.baseUrl, 'GET', '/v1/credits', { key }), 'GET', '/v1/credits', 200)
    conforms(v, await call(stack.baseUrl, 'GET', '/v1/credits/ledger', { key }), 'GET', '/v1/credits/ledger', 200)

    const hook = await call(stack.baseUrl, 'POST', '/v1/webhooks', {
      key,
      json: {
        name: 'docs-hook',
        url: 'https://127.0.0.1:9/hook',
        auth_type: 'API_KEY',
        auth: { api_key: 'k' },
        headers: { 'X-Tenant': 't' },
      },
    })
    conforms(v, hook, 'POST', '/v1/webhooks', 201)
    conforms(
      v,
      await call(stack.baseUrl, 'GET', `/v1/webhooks/${hook.body.id}`, { key }),
      'GET',
      '/v1/webhooks/{id}',
      200,
    )
    conforms(v, await call(stack.baseUrl, 'GET', '/v1/webhooks', { key }), 'GET', '/v1/webhooks', 200)
    conforms(
      v,
      await call(stack.baseUrl, 'POST', `/v1/webhooks/${hook.body.id}/rotate`, { key }),
      'POST',
      '/v1/webhooks/{id}/rotate',
      200,
    )
    conforms(
      v,
      await call(stack.baseUrl, 'PATCH', `/v1/webhooks/${hook.body.id}`, { key, json: { status: 'active' } }),
      'PATCH',
      '/v1/webhooks/{id}',
      200,
    )
    conforms(
      v,
      await call(stack.baseUrl, 'GET', `/v1/webhooks/${hook.body.id}/deliveries`, { key }),
      'GET',
      '/v1/webhooks/{id}/deliveries',
      200,
    )

    // Errors, each in its documented envelope and code list.
    const dup = await call(stack.baseUrl, 'POST', '/v1/webhooks', {
      key,
      json: { name: 'docs-hook', url: 'https://127.0.0.1:9/other', auth_type: 'NONE' },
    })
    conforms(v, dup, 'POST', '/v1/webhooks', 409)
    expect(dup.body.error).toBe('WEBHOOK_NAME_CONFLICT')
    const noFile = await call(stack.baseUrl, 'POST', '/v1/jobs', {
      key,
      form: fileForm('file', [], { pipeline_id: pipelineId }),
    })
    conforms(v, noFile, 'POST', '/v1/jobs', 400)
    expect(noFile.body.error).toBe('MISSING_PART')
    const cancelDone = await call(stack.baseUrl, 'POST', `/v1/jobs/${jobId}/cancel`, { key })
    conforms(v, cancelDone, 'POST', '/v1/jobs/{job_id}/cancel', 409)
    expect(cancelDone.body.error).toBe('JOB_NOT_CANCELLABLE')
    const unknown = await call(stack.baseUrl, 'GET', '/v1/jobs/job_does_not_exist', { key })
    conforms(v, unknown, 'GET', '/v1/jobs/{job_id}', 404)
    expect(unknown.body.error.code).toBe('job_not_found')
    conforms(v, await call(stack.baseUrl, 'GET', '/v1/jobs?limit=0', { key }), 'GET', '/v1/jobs', 400)
    const unauth = await call(stack.baseUrl, 'GET', '/v1/jobs')
    conforms(v, unauth, 'GET', '/v1/jobs', 401)
    expect(unauth.body.error.code).toBe('unauthorized')
    const { key: readOnly } = await newWorkspace(stack.baseUrl, 'A', { scopes: ['jobs:read'] })
    conforms(v, await call(stack.baseUrl, 'GET', '/v1/credits', { key: readOnly }), 'GET', '/v1/credits', 403)
  }, 120_000)
})

describe('real responses match the document, Form B', () => {
  it('submission, include=stages,result, list, documents, credits, webhooks and errors', async () => {
    const v = openApiValidator((await call(stack.baseUrl, 'GET', '/v1/openapi.json?form=B')).body)
    const { key } = await newWorkspace(stack.baseUrl, 'B', { credits: 100 })
    const pdf = await invoicePdf()

    const submit = await call(stack.baseUrl, 'POST', '/v1/jobs?client_reference_id=ref-openapi', {
      key,
      form: fileForm('files', [{ name: 'invoice.pdf', bytes: pdf }], { schema_id: 'invoice' }),
    })
    conforms(v, submit, 'POST', '/v1/jobs', 202)
    const jobId = submit.body[0].job_id as string

    conforms(v, await call(stack.baseUrl, 'GET', `/v1/jobs/${jobId}`, { key }), 'GET', '/v1/jobs/{job_id}', 200)
    const done = await pollUntil(
      () => call(stack.baseUrl, 'GET', `/v1/jobs/${jobId}?include=stages,result`, { key }),
      (r) => FINAL_B.includes(r.body.status),
    )
    conforms(v, done, 'GET', '/v1/jobs/{job_id}', 200)
    expect(done.body.status).toBe('completed')
    expect(done.body.stages.length).toBeGreaterThan(0)
    expect(done.body.result.documents.length).toBeGreaterThan(0)

    // mode=sync on a small file finishes inside the window: 200 with full jobs.
    const sync = await call(stack.baseUrl, 'POST', '/v1/jobs?mode=sync', {
      key,
      form: fileForm('files', [{ name: 'invoice.pdf', bytes: pdf }]),
    })
    expect([200, 202]).toContain(sync.status)
    conforms(v, sync, 'POST', '/v1/jobs', sync.status)

    conforms(v, await call(stack.baseUrl, 'GET', '/v1/jobs?limit=5', { key }), 'GET', '/v1/jobs', 200)
    conforms(
      v,
      await call(stack.baseUrl, 'GET', `/v1/documents/${done.body.result.documents[0].id}`, { key }),
      'GET',
      '/v1/documents/{id}',
      200,
    )
    conforms(v, await call(stack.baseUrl, 'GET', '/v1/credits', { key }), 'GET', '/v1/credits', 200)
    conforms(v, await call(stack.baseUrl, 'GET', '/v1/pipelines?page_size=5', { key }), 'GET', '/v1/pipelines', 200)
    conforms(v, await call(stack.baseUrl, 'GET', '/v1/pipelines/parse', { key }), 'GET', '/v1/pipelines/{id}', 200)

    const hook = await call(stack.baseUrl, 'POST', '/v1/webhooks', {
      key,
      json: {
        name: 'docs-hook',
        url: 'https://127.0.0.1:9/hook',
        events: ['pipeline.deployed'],
        auth: 'apikey',
        apikey: { name: 'X-Key', key: 'k' },
      },
    })
    conforms(v, hook, 'POST', '/v1/webhooks', 201)
    const read = await call(stack.baseUrl, 'GET', `/v1/webhooks/${hook.body.id}`, { key })
    conforms(v, read, 'GET', '/v1/webhooks/{id}', 200)
    expect(read.body).not.toHaveProperty('secret')
    conforms(v, await call(stack.baseUrl, 'GET', '/v1/webhooks', { key }), 'GET', '/v1/webhooks', 200)

    // Errors of the spec's table, each in its documented envelope.
    const asFile = await call(stack.baseUrl, 'POST', '/v1/jobs', {
      key,
      form: fileForm('file', [{ name: 'invoice.pdf', bytes: pdf }]),
    })
    conforms(v, asFile, 'POST', '/v1/jobs', 400)
    expect(asFile.body.error).toBe('MISSING_PART')
    const empty = await call(stack.baseUrl, 'POST', '/v1/jobs', {
      key,
      form: fileForm('files', [{ name: 'empty.pdf', bytes: new Uint8Array() }]),
    })
    conforms(v, empty, 'POST', '/v1/jobs', 400)
    expect(empty.body.error).toBe('MISSING_FILE')
    const unknown = await call(stack.baseUrl, 'GET', '/v1/jobs/job_does_not_exist', { key })
    conforms(v, unknown, 'GET', '/v1/jobs/{job_id}', 404)
    expect(unknown.body.error.code).toBe('job_not_found')
    const badKey = await call(stack.baseUrl, 'GET', `/v1/jobs/${jobId}`, { key: 'qk_not-a-key' })
    conforms(v, badKey, 'GET', '/v1/jobs/{job_id}', 401)
    const badPage = await call(stack.baseUrl, 'GET', '/v1/webhooks?page=0', { key })
    conforms(v, badPage, 'GET', '/v1/webhooks', 400)
    expect(badPage.body.error).toBe('INVALID_PARAMETER')
  }, 120_000)
})

describe('real responses match the document, admin error groups', () => {
  it('GET /admin/v1/error-groups (with and without ?status=), GET one, rerun 200 and 409, unknown 404', async () => {
    for (const form of ['A', 'B'] as const) {
      const doc = (await call(stack.baseUrl, 'GET', `/v1/openapi.json?form=${form}`)).body
      expect(Object.keys(doc.paths), form).toEqual(
        expect.arrayContaining([
          '/admin/v1/error-groups',
          '/admin/v1/error-groups/{id}',
          '/admin/v1/error-groups/{id}/rerun',
        ]),
      )
    }
    const v = openApiValidator((await call(stack.baseUrl, 'GET', '/v1/openapi.json?form=B')).body)
    writeFileSync(blocked(), 'not a directory')
    const { key, workspaceId } = await newWorkspace(stack.baseUrl, 'B', { credits: 10 })
    const p = await call(stack.baseUrl, 'POST', '/v1/pipelines', {
      key,
      json: { name: 'to-dir', definition: { destination: { name: 'blocked' } } },
    })
    await call(stack.baseUrl, 'POST', `/v1/pipelines/${p.body.id}/versions/1/publish`, { key })
    const submit = await call(stack.baseUrl, 'POST', '/v1/jobs', {
      key,
      form: fileForm('files', [{ name: 'invoice.pdf', bytes: await invoicePdf() }], { pipeline_id: p.body.id }),
    })
    expect(submit.status).toBe(202)
    const jobId = submit.body[0].job_id as string

    const list = await pollUntil(
      () => call(stack.baseUrl, 'GET', `/admin/v1/error-groups?workspace_id=${workspaceId}`, { admin: true }),
      (r) => r.body.data?.[0]?.jobs.blocked === 1,
      60_000,
    )
    conforms(v, list, 'GET', '/admin/v1/error-groups', 200)
    const group = list.body.data[0]
    expect(group).toMatchObject({ workspace_id: workspaceId, stage: 'destination', status: expect.any(String) })
    const byStatus = await call(stack.baseUrl, 'GET', `/admin/v1/error-groups?status=${group.status}`, { admin: true })
    conforms(v, byStatus, 'GET', '/admin/v1/error-groups', 200)
    expect(byStatus.body.data.map((g: { id: string }) => g.id)).toContain(group.id)
    conforms(
      v,
      await call(stack.baseUrl, 'GET', `/admin/v1/error-groups/${group.id}`, { admin: true }),
      'GET',
      '/admin/v1/error-groups/{id}',
      200,
    )

    rmSync(blocked(), { force: true })
    const rerun = await call(stack.baseUrl, 'POST', `/admin/v1/error-groups/${group.id}/rerun`, { admin: true })
    conforms(v, rerun, 'POST', '/admin/v1/error-groups/{id}/rerun', 200)
    expect(rerun.body.requeued).toBe(1)
    await pollUntil(
      () => call(stack.baseUrl, 'GET', `/v1/jobs/${jobId}`, { key }),
      (r) => r.body.status === 'completed',
    )
    const resolved = await pollUntil(
      () => call(stack.baseUrl, 'GET', `/admin/v1/error-groups/${group.id}`, { admin: true }),
      (r) => r.body.status === 'resolved',
      30_000,
    )
    conforms(v, resolved, 'GET', '/admin/v1/error-groups/{id}', 200)
    const again = await call(stack.baseUrl, 'POST', `/admin/v1/error-groups/${group.id}/rerun`, { admin: true })
    conforms(v, again, 'POST', '/admin/v1/error-groups/{id}/rerun', 409)
    conforms(
      v,
      await call(stack.baseUrl, 'GET', '/admin/v1/error-groups?status=resolved', { admin: true }),
      'GET',
      '/admin/v1/error-groups',
      200,
    )
    conforms(
      v,
      await call(stack.baseUrl, 'GET', '/admin/v1/error-groups/grp_does_not_exist', { admin: true }),
      'GET',
      '/admin/v1/error-groups/{id}',
      404,
    )
    conforms(
      v,
      await call(stack.baseUrl, 'POST', '/admin/v1/error-groups/grp_does_not_exist/rerun', { admin: true }),
      'POST',
      '/admin/v1/error-groups/{id}/rerun',
      404,
    )
  }, 120_000)
})
