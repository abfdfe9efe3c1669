// Validates JSON bodies against the response schemas of an OpenAPI 3.1 document (JSON Schema draft 2020-12, ajv).
// Used by the OpenAPI unit test and the black-box test, which fetches the document from the running API.
//
// The document leaves response objects open (a new field is not a breaking change for clients); the tests close
// them — `additionalProperties: false` on every object schema that lists properties — so a field the document does
// not declare fails validation.
import { Ajv2020 } from 'ajv/dist/2020.js'

type Json = Record<string, unknown>

const SKIP = new Set(['enum', 'const', 'default', 'examples', 'example'])

/** A deep copy with every `type: object` schema that lists properties closed to other properties. */
export function closeObjects<T>(node: T): T {
  if (Array.isArray(node)) return node.map(closeObjects) as T
  if (!node || typeof node !== 'object') return node
  const out: Json = {}
  for (const [k, v] of Object.entries(node as Json)) out[k] = SKIP.has(k) ? v : closeObjects(v)
  if (out.type === 'object' && out.properties && out.additionalProperties === undefined)
    out.additionalProperties = false
  return out as T
}

const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/i
const pointer = (...parts: string[]) => parts.map((p) => p.replace(/~/g, '~0').replace(/\//g, '~1')).join('/')

export type OpenApiValidator = {
  /** Validation errors of `body` against the response of `method path` with `status` (empty: valid). */
  responseErrors(path: string, method: string, status: number, body: unknown): string[]
  /** Validation errors of `value` against `#/components/schemas/<name>`. */
  schemaErrors(name: string, value: unknown): string[]
}

export function openApiValidator(doc: Json): OpenApiValidator {
  const closed = closeObjects(doc)
  const ajv = new Ajv2020({ strict: false, allErrors: true })
  ajv.addFormat('date-time', {
    type: 'string',
    validate: (s: string) => RFC3339.test(s) && !Number.isNaN(Date.parse(s)),
  })
  ajv.addFormat('uri', {
    type: 'string',
    validate: (s: string) => {
      try {
        return Boolean(new URL(s).protocol)
      } catch {
        return false
      }
    },
  })
  ajv.addFormat('binary', true)
  ajv.addSchema({ ...closed, $id: 'quire:openapi' })

  const compiled = new Map<string, ReturnType<typeof ajv.compile>>()
  const run = (ref: string, value: unknown) => {
    let validate = compiled.get(ref)
    if (!validate) compiled.set(ref, (validate = ajv.compile({ $ref: ref })))
    if (validate(value)) return []
    return (validate.errors ?? []).map(
      (e) => `${e.instancePath || '(root)'} ${e.message}${e.params ? ` ${JSON.stringify(e.params)}` : ''}`,
    )
  }

  return {
    responseErrors(path, method, status, body) {
      const op = ((closed.paths as Json)[path] as Json | undefined)?.[method.toLowerCase()] as Json | undefined
      if (!op) return [`no operation ${method} ${path} in the document`]
      const responses = op.responses as Json
      const response = responses[String(status)] as Json | undefined
      if (!response) return [`${method} ${path} documents no ${status} response`]
      if (!(response.content as Json | undefined)?.['application/json']) return []
      return run(
        `quire:openapi#/${pointer('paths', path, method.toLowerCase(), 'responses', String(status), 'content', 'application/json', 'schema')}`,
        body,
      )
    },
    schemaErrors(name, value) {
      return run(`quire:openapi#/${pointer('components', 'schemas', name)}`, value)
    },
  }
}
