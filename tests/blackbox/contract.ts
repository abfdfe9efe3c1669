// Every response the black-box client receives is checked against the OpenAPI document the API serves for the
// calling key's form: the status must be declared for the operation, and a JSON body must match its schema (objects
// closed, so an undeclared field fails too). The document can therefore never describe a different API than the one
// that answers.
import { type OpenApiValidator, openApiValidator } from '../../apps/api/src/openapi/openapi-validator.test-helper.ts'

type Json = Record<string, any>
type Form = 'A' | 'B'

const validators = new Map<Form, { doc: Json; validator: OpenApiValidator; templates: [RegExp, string][] }>()
const formOfKey = new Map<string, Form>()

async function load(baseUrl: string, form: Form) {
  let v = validators.get(form)
  if (!v) {
    const res = await fetch(`${baseUrl}/v1/openapi.json?form=${form}`)
    if (res.status !== 200) throw new Error(`openapi.json?form=${form}: ${res.status}`)
    const doc = (await res.json()) as Json
    const templates = Object.keys(doc.paths).map((t): [RegExp, string] => [
      new RegExp(`^${t.replace(/\{\w+\}/g, '[^/]+')}$`),
      t,
    ])
    // Literal paths before templated ones: /v1/jobs/x/cancel must not match a shorter template first.
    templates.sort(([, a], [, b]) => (a.match(/\{/g)?.length ?? 0) - (b.match(/\{/g)?.length ?? 0))
    v = { doc, validator: openApiValidator(doc), templates }
    validators.set(form, v)
  }
  return v
}

async function formFor(baseUrl: string, key: string | undefined): Promise<Form> {
  if (!key) return 'A' // admin and unauthenticated operations are the same in both documents
  let form = formOfKey.get(key)
  if (!form) {
    const res = await fetch(`${baseUrl}/v1/openapi.json`, { headers: { 'X-API-Key': key } })
    form = res.status === 200 ? (((await res.json()) as Json).paths['/v1/jobs'].post['x-form'] as Form) : 'A'
    formOfKey.set(key, form)
  }
  return form
}

/** Problems of one response against the served document; empty when it conforms. */
export async function contractProblems(
  baseUrl: string,
  req: { method: string; path: string; key?: string },
  res: { status: number; body: unknown; contentType: string | null },
): Promise<string[]> {
  const { doc, validator, templates } = await load(baseUrl, await formFor(baseUrl, req.key))
  const pathname = new URL(req.path, baseUrl).pathname
  const template = templates.find(([re]) => re.test(pathname))?.[1]
  if (!template) return [] // not an operation of the API (a 404 for an unknown path)
  // A known path with a method it does not take is the router's 405, documented by omission.
  if (!doc.paths[template][req.method.toLowerCase()]) {
    return res.status === 405 ? [] : [`${req.method} ${template} is not in the document, yet answered ${res.status}`]
  }
  const json = res.contentType?.includes('application/json') ?? false
  const problems = validator.responseErrors(template, req.method, res.status, json ? res.body : undefined)
  // A non-JSON body (the /docs page, metrics) is checked for its status only.
  return json ? problems : problems.filter((p) => p.includes('documents no'))
}

/** Throws when a response does not conform to the served document (see contractProblems). */
export async function assertContract(
  baseUrl: string,
  req: { method: string; path: string; key?: string },
  res: { status: number; body: unknown; contentType: string | null },
): Promise<void> {
  const problems = await contractProblems(baseUrl, req, res)
  if (problems.length) {
    throw new Error(
      `${req.method} ${req.path} → ${res.status} does not match the served OpenAPI document:\n${problems.join('\n')}`,
    )
  }
}

/**
 * `fetch(baseUrl + path, init)` with the response checked against the served document before it is returned (the
 * key is read from the X-API-Key header). The returned Response still has its body to read.
 */
export async function contractFetch(baseUrl: string, path: string, init: RequestInit = {}): Promise<Response> {
  const res = await fetch(baseUrl + path, init)
  const text = await res.clone().text()
  let body: unknown = text
  try {
    body = text ? JSON.parse(text) : null
  } catch {}
  const key = new Headers(init.headers).get('x-api-key') ?? undefined
  await assertContract(
    baseUrl,
    { method: init.method ?? 'GET', path, key },
    { status: res.status, body, contentType: res.headers.get('content-type') },
  )
  return res
}
