import { type DomainErrorCode, PipelineDefinition } from '@quire/domain'
import { type ApiForm, ExtractedField, LineItem } from '@quire/forms'
import { z } from 'zod'
import { INTERNAL_ERROR_CODE } from '../http/errors.ts'
import { bodiesOf, type BodySpec, declaredErrors, forForm, type RouteSpec } from '../routes/route.ts'
import { ERROR_DESCRIPTIONS, errorInfo, FlatError, NestedError } from './error-schemas.ts'
import { FormAWebhookPayload, FormBWebhookPayload } from './webhook-schemas.ts'

/**
 * The OpenAPI 3.1 document of one API form, derived from the route registry (routes/registry.ts): each operation's
 * method, path, auth, scopes, parameters, bodies, responses and errors come from its one declaration, the schemas
 * from the zod objects that validate requests and shape responses (`z.toJSONSchema`, draft 2020-12, the dialect of
 * OpenAPI 3.1), and error responses from the error table in http/errors.ts. Only form-wide prose is written here.
 */

type Json = Record<string, unknown>

// ---------------------------------------------------------------------------------------------------------------
// Schema generation

const MAX_INT = Number.MAX_SAFE_INTEGER
type ZodDef = { type: string; catchall?: unknown }

/**
 * Tidies zod's JSON Schema for a reader: no 200-character date-time regex next to `format: date-time`, no ±2^53 bounds
 * on integers, files as OpenAPI 3.1 binary parts, and response objects left open (`additionalProperties` unset) so
 * adding a field is not a breaking change for clients that validate. The tests close them again.
 */
function tidy(ctx: { zodSchema: unknown; jsonSchema: Json }, io: 'input' | 'output') {
  const js = ctx.jsonSchema
  const def = (ctx.zodSchema as { _zod: { def: ZodDef } })._zod.def
  if (js.format === 'date-time') delete js.pattern
  if (js.maximum === MAX_INT) delete js.maximum
  if (js.minimum === -MAX_INT) delete js.minimum
  if (def.type === 'file') {
    delete js.contentEncoding
    js.contentMediaType = 'application/octet-stream'
  }
  if (io === 'output' && def.type === 'object' && def.catchall === undefined && js.additionalProperties === false) {
    delete js.additionalProperties
  }
}

const toJson = (schema: z.ZodType, io: 'input' | 'output'): Json => {
  const out = z.toJSONSchema(schema, {
    target: 'draft-2020-12',
    io,
    unrepresentable: 'any',
    override: (ctx) => tidy(ctx as never, io),
  }) as Json
  delete out.$schema
  return out
}

/** Named schemas of one document: request bodies in input mode, responses in output mode, referenced by name. */
class Components {
  private readonly input = z.registry<{ id: string }>()
  private readonly output = z.registry<{ id: string }>()
  private readonly names = new Map<string, z.ZodType>()

  ref(name: string, schema: z.ZodType, io: 'input' | 'output'): Json {
    const known = this.names.get(name)
    if (known && known !== schema) throw new Error(`two different schemas named ${name}`)
    if (!known) {
      this.names.set(name, schema)
      ;(io === 'input' ? this.input : this.output).add(schema, { id: name })
    }
    return { $ref: `#/components/schemas/${name}` }
  }

  schemas(): Record<string, Json> {
    const out: Record<string, Json> = {}
    for (const io of ['input', 'output'] as const) {
      const generated = z.toJSONSchema(io === 'input' ? this.input : this.output, {
        target: 'draft-2020-12',
        io,
        unrepresentable: 'any',
        uri: (id) => `#/components/schemas/${id}`,
        override: (ctx) => tidy(ctx as never, io),
      }).schemas as Record<string, Json>
      for (const [name, schema] of Object.entries(generated)) {
        const { $schema: _s, $id: _i, ...rest } = schema
        out[name] = rest
      }
    }
    return Object.fromEntries(Object.entries(out).sort(([a], [b]) => a.localeCompare(b)))
  }
}

function queryParameters(query: { schema: z.ZodObject; docs?: Record<string, string> }): Json[] {
  const js = toJson(query.schema, 'input') as { properties?: Record<string, Json>; required?: string[] }
  const properties = js.properties ?? {}
  const docs = query.docs ?? {}
  for (const name of Object.keys(docs)) {
    if (!properties[name]) throw new Error(`query docs name ${name}, which is no parameter`)
  }
  return Object.entries(properties).map(([name, schema]) => {
    const { description: own, ...rest } = schema
    const description = own ?? docs[name]
    return {
      name,
      in: 'query',
      required: js.required?.includes(name) ?? false,
      ...(description ? { description } : {}),
      schema: rest,
    }
  })
}

function errorResponses(codes: DomainErrorCode[]): Record<string, Json> {
  const byStatus = new Map<number, ReturnType<typeof errorInfo>[]>()
  for (const code of new Set(codes)) {
    const info = errorInfo(code)
    byStatus.set(info.status, [...(byStatus.get(info.status) ?? []), info])
  }
  const out: Record<string, Json> = {}
  for (const [status, infos] of [...byStatus].sort(([a], [b]) => a - b)) {
    const flat = [...new Set(infos.filter((i) => i.envelope === 'flat').map((i) => i.wireCode))]
    const nested = [...new Set(infos.filter((i) => i.envelope === 'nested').map((i) => i.wireCode))]
    const variants: Json[] = []
    if (flat.length) {
      variants.push({ allOf: [{ $ref: '#/components/schemas/FlatError' }, { properties: { error: { enum: flat } } }] })
    }
    if (nested.length) {
      variants.push({
        allOf: [
          { $ref: '#/components/schemas/NestedError' },
          { properties: { error: { properties: { code: { enum: nested } } } } },
        ],
      })
    }
    out[String(status)] = {
      description: infos.map((i) => `\`${i.wireCode}\` (${i.envelope}): ${ERROR_DESCRIPTIONS[i.code]}`).join('\n\n'),
      content: { 'application/json': { schema: variants.length === 1 ? variants[0] : { anyOf: variants } } },
    }
  }
  return out
}

/** Any operation may meet a fault of Quire's own: a 500 with a stable code and a plain message (DESIGN, Robustness). */
const INTERNAL_ERROR_RESPONSE = {
  '500': {
    description: `\`${INTERNAL_ERROR_CODE}\` (flat): a fault of Quire's own, never of the request; the message names an error id under which the operator's log holds the details.`,
    content: {
      'application/json': {
        schema: {
          allOf: [
            { $ref: '#/components/schemas/FlatError' },
            { properties: { error: { enum: [INTERNAL_ERROR_CODE] } } },
          ],
        },
      },
    },
  },
}

function queryOf(spec: RouteSpec, form: ApiForm): { schema: z.ZodObject; docs?: Record<string, string> } | undefined {
  const declared = forForm(spec.query, form)
  if (declared) return declared
  // Text fields that may also arrive in the query string are documented as query parameters too.
  const multipart = bodiesOf(spec, form).find((b) => b.kind === 'multipart' && b.fieldsInQuery)
  return multipart?.kind === 'multipart' ? { schema: multipart.fields } : undefined
}

function bodySchema(b: BodySpec): z.ZodType {
  return b.kind === 'json'
    ? b.schema
    : b.fields.extend({ [b.fileField]: z.array(z.file()).min(1).describe(b.fileDescription) })
}

function security(spec: RouteSpec, form: ApiForm): Json[] {
  if (spec.auth === 'none') return []
  if (spec.auth === 'admin') return [{ AdminToken: [] }]
  if (spec.auth === 'optional-key') return [{}, { ApiKey: [] }]
  // OpenAPI 3.1: for an apiKey scheme the array lists required roles; several requirement objects mean "any of".
  return (forForm(spec.scopes, form) ?? []).map((s) => ({ ApiKey: [s] }))
}

function operationObject(spec: RouteSpec, form: ApiForm, components: Components): Json {
  const params: Json[] = Object.entries(forForm(spec.pathParams, form) ?? {}).map(([name, description]) => ({
    name,
    in: 'path',
    required: true,
    description,
    schema: { type: 'string' },
  }))
  const query = queryOf(spec, form)
  if (query) params.push(...queryParameters(query))

  let requestBody: Json | undefined
  const bodies = bodiesOf(spec, form)
  if (bodies.length) {
    const content: Json = {}
    for (const b of bodies) {
      content[b.kind === 'json' ? 'application/json' : 'multipart/form-data'] = {
        schema: components.ref(b.name, bodySchema(b), 'input'),
      }
    }
    requestBody = { required: true, content }
  }

  const responses: Record<string, Json> = {}
  for (const [status, reply] of Object.entries(forForm(spec.responses, form))) {
    let content: Json | undefined
    if (reply.text) content = { [reply.text]: { schema: { type: 'string' } } }
    else if (reply.json) content = { 'application/json': { schema: reply.json } }
    else if (reply.schema && reply.name)
      content = { 'application/json': { schema: components.ref(reply.name, reply.schema, 'output') } }
    responses[status] = { description: reply.description, ...(content ? { content } : {}) }
  }
  Object.assign(responses, errorResponses(declaredErrors(spec, form)), INTERNAL_ERROR_RESPONSE)

  const scopes = spec.auth === 'key' ? forForm(spec.scopes, form) : undefined
  const scopeNote = scopes?.length ? `Scope: ${scopes.map((s) => `\`${s}\``).join(' or ')}.` : ''
  const description = [forForm(spec.description, form), scopeNote].filter(Boolean).join('\n\n')
  return {
    operationId: forForm(spec.operationId, form),
    tags: [spec.tag],
    summary: forForm(spec.summary, form),
    ...(description ? { description } : {}),
    security: security(spec, form),
    ...(params.length ? { parameters: params } : {}),
    ...(requestBody ? { requestBody } : {}),
    responses,
    ...(scopes ? { 'x-scopes': scopes } : {}),
    'x-form': form,
  }
}

const TAGS = [
  { name: 'Jobs', description: 'One file (Form B) or batch of files (Form A) run through one pipeline.' },
  { name: 'Pipelines', description: 'Versioned pipeline definitions; versions are drafts until published.' },
  { name: 'Webhooks', description: 'Outbound endpoints, HMAC-SHA256 signed deliveries.' },
  { name: 'Documents', description: 'The documents a job produces: lineage, events, extracted data.' },
  { name: 'Credits', description: 'Reserve at submission, settle to the amount used.' },
  { name: 'API description', description: 'This document and its rendered reference.' },
  { name: 'Operations', description: 'For operators.' },
  { name: 'Admin', description: 'Operator API: `Authorization: Bearer $QUIRE_ADMIN_TOKEN`.' },
]

const FORM_NOTES: Record<ApiForm, string> = {
  A: 'Form A: `POST /v1/jobs` takes `pipeline_id` and `file` parts (one job per request); jobs read `id`, `status` (processing, completed, failed, cancelled), `stage_now`, `trace`; webhook secrets are `hmac_secret`; versions read `"v<n>"`. Deliveries are signed `X-Service-Signature: sha256=<hex HMAC-SHA256(raw body)>`.',
  B: 'Form B: `POST /v1/jobs` takes `files` parts (one job per file, `mode=sync` optional); jobs read `job_id`, `status`, `stages` and `result` on request; webhook secrets are `secret`; versions are integers. Deliveries are signed `X-Service-Signature: v1=<hex HMAC-SHA256("<X-Service-Timestamp>.<raw body>")>`.',
}

/** The body of a delivery in each form (the `webhooks` section). */
const WEBHOOK_PAYLOADS: Record<ApiForm, { name: string; schema: z.ZodType }> = {
  A: { name: 'FormAWebhookPayload', schema: FormAWebhookPayload },
  B: { name: 'FormBWebhookPayload', schema: FormBWebhookPayload },
}

/** The OpenAPI 3.1 document of one form. */
export function buildOpenApi(routes: readonly RouteSpec[], form: ApiForm, opts: { serverUrl?: string } = {}): Json {
  const components = new Components()
  components.ref('FlatError', FlatError, 'output')
  components.ref('NestedError', NestedError, 'output')
  components.ref('PipelineDefinition', PipelineDefinition, 'input')
  // Extracted data refers to these by name (a document's `data`, Form B's `result`).
  components.ref('FieldValue', ExtractedField, 'output')
  components.ref('LineItem', LineItem, 'output')
  const paths: Record<string, Record<string, Json>> = {}
  for (const spec of routes) {
    paths[spec.path] ??= {}
    paths[spec.path]![spec.method] = operationObject(spec, form, components)
  }
  // Outbound deliveries (OpenAPI 3.1 `webhooks`): what a receiver gets, one operation per form.
  const payload = components.ref(WEBHOOK_PAYLOADS[form].name, WEBHOOK_PAYLOADS[form].schema, 'output')
  const webhooks = {
    delivery: {
      post: {
        summary: `A signed delivery to a webhook's url (Form ${form})`,
        description:
          'Sent for each event the webhook subscribed to. Verify the signature against the raw body before parsing ' +
          'it; deduplicate on the delivery id. Any 2xx is success; anything else (or no answer in time) is retried.',
        requestBody: { required: true, content: { 'application/json': { schema: payload } } },
        responses: { '2XX': { description: 'Received.' } },
      },
    },
  }
  const schemas = components.schemas()
  return {
    openapi: '3.1.0',
    jsonSchemaDialect: 'https://json-schema.org/draft/2020-12/schema',
    info: {
      title: `Quire API (Form ${form})`,
      version: '1',
      summary: 'Queue-backed document processing: submit files as jobs, poll or receive signed webhooks.',
      description: [
        'Every `/v1` request sends `X-API-Key`; a key belongs to one workspace, and the workspace’s API form (A or B, fixed at creation) decides the shapes below.',
        FORM_NOTES[form],
        'Errors: branch on the HTTP status, then the code. Most errors use the flat envelope `{error, message, timestamp}`; authentication (401 `unauthorized`), scope (403 `insufficient_scope`) and job lookups (404 `job_not_found`, 410 `job_expired`) use the nested envelope `{error: {code, message}}`.',
        'Generated from the schemas that validate requests and shape responses.',
      ].join('\n\n'),
    },
    ...(opts.serverUrl ? { servers: [{ url: opts.serverUrl }] } : {}),
    tags: TAGS,
    security: [{ ApiKey: [] }],
    paths,
    webhooks,
    components: {
      securitySchemes: {
        ApiKey: {
          type: 'apiKey',
          in: 'header',
          name: 'X-API-Key',
          description: 'Workspace API key; operations list the scope they need.',
        },
        AdminToken: {
          type: 'http',
          scheme: 'bearer',
          description: 'The operator token `QUIRE_ADMIN_TOKEN` (admin API only).',
        },
      },
      schemas,
    },
  }
}
