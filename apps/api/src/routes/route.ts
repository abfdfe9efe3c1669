import type { KeyState, Principal } from '@quire/core'
import type { DomainErrorCode, Scope } from '@quire/domain'
import type { ApiForm, FormProfile } from '@quire/forms'
import type { z } from 'zod'
import type { AppDeps, Ctx } from '../http/context.ts'
import type { SubmitParameters } from '../http/submit-parameters.ts'

/**
 * One declaration per endpoint. Koa routing, authentication, scope checks, request parsing and validation, accepted
 * parameter lists (UNKNOWN_PARAMETER), the response contract check and the OpenAPI document are all derived from the
 * `RouteSpec`s in routes/registry.ts; nothing restates a method, path, scope, schema or error code.
 *
 * Where the two API forms differ, a value is declared for each with `byForm({A, B})`; it is resolved once per request
 * from the calling key's workspace (or, for the OpenAPI document, per form). Code never compares forms.
 */
export type ByForm<T> = { readonly byForm: Readonly<Record<ApiForm, T>> }
export type Varies<T> = T | ByForm<T>

// Two type parameters: one would make TypeScript merge the two object types into one with optional holes.
export const byForm = <A, B>(values: { A: A; B: B }): ByForm<A | B> => ({ byForm: values })

export function forForm<T>(value: Varies<T>, form: ApiForm): T {
  return value !== null && typeof value === 'object' && 'byForm' in value ? value.byForm[form] : (value as T)
}

type Json = Record<string, unknown>

/** A JSON request body. `validate: 'handler'` when the handler must see the raw body first (its own error codes). */
export type JsonBodySpec = { kind: 'json'; name: string; schema: z.ZodType; validate?: 'schema' | 'handler' }
/** multipart/form-data: repeated file parts under `fileField`, text fields validated by `fields`. */
export type MultipartBodySpec = {
  kind: 'multipart'
  name: string
  fields: z.ZodObject
  fileField: string
  fileDescription: string
  /** The text fields may also arrive in the query string (a form field wins over the query). */
  fieldsInQuery?: boolean
  /**
   * A file part over the size limit refuses that file, not the whole request: the file parts before it (and every
   * text field of the request, those after it included) reach the handler, which processes them in order and then
   * answers the refusal (spec, Form B: "If a later file is rejected, jobs already created for earlier files stand and
   * the response is the error"). See MultipartOptions.earlierFilesStand and refusedFileOf.
   */
  earlierFilesStand?: boolean
}
export type BodySpec = JsonBodySpec | MultipartBodySpec

export type ReplySpec = { description: string; name?: string; schema?: z.ZodType; json?: Json; text?: string }
/** `key`: X-API-Key (scopes apply); `admin`: the operator token; `optional-key`: a key is read if sent. */
export type Auth = 'key' | 'admin' | 'optional-key' | 'none'
export type Tag =
  | 'Jobs'
  | 'Pipelines'
  | 'Webhooks'
  | 'Documents'
  | 'Credits'
  | 'API description'
  | 'Operations'
  | 'Admin'

export type RouteInput<Q = unknown, B = unknown> = {
  ctx: Ctx
  deps: AppDeps
  /** The API key's principal on `key` routes (and `optional-key` routes called with a key). */
  principal: Principal
  /**
   * On routes that declare `confirmsKeyInWrite`, when the principal is one read on an earlier request: the key state
   * the handler's first write must confirm (createJob's `confirmKey`). Null when the key was read for this request.
   */
  confirmKey: KeyState | null
  /** The form profile of the principal's workspace. */
  profile: FormProfile
  params: Record<string, string>
  query: Q
  body: B
  /** Which declared body arrived (routes that take JSON or multipart). */
  bodyKind: BodySpec['kind'] | null
  /** Every declared route: the API description is built from it. */
  routes: readonly RouteSpec[]
}

/** What a handler answers; the status must be one its declaration lists. */
export type RouteReply = { status: number; body: unknown; type?: string; headers?: Readonly<Record<string, string>> }

// Handlers narrow their own input; the spec list is heterogeneous.
export type Handler = (input: RouteInput<any, any>) => Promise<RouteReply>

export type RouteSpec = {
  method: 'get' | 'post' | 'patch' | 'delete'
  /** OpenAPI template, e.g. `/v1/jobs/{job_id}`. */
  path: string
  /** Varies per form where a form's clients already know it by its own name. */
  operationId: Varies<string>
  tag: Tag
  summary: Varies<string>
  /** False for a route that answers without PostgreSQL or Redis (liveness): it never answers 503. */
  usesDependencies?: boolean
  /**
   * The route reports outages itself (readiness names what is down), so it is not answered 503 up front while Redis
   * is away as every other route that uses the dependencies is.
   */
  reportsOutages?: boolean
  description?: Varies<string>
  auth: Auth
  /**
   * The handler's first write confirms the API key in its own statement (a submission: createJob's `confirmKey`), so
   * the key may be served from the principals this process read lately instead of being read first: one statement
   * less per request. Only for handlers that pass `confirmKey` on before anything else is written.
   */
  confirmsKeyInWrite?: boolean
  /** Any one of these suffices. */
  scopes?: Varies<Scope[]>
  pathParams?: Varies<Record<string, string>>
  query?: Varies<{ schema: z.ZodObject; docs?: Record<string, string> } | undefined>
  /** Several entries are alternative content types. */
  body?: Varies<BodySpec | BodySpec[] | undefined>
  responses: Varies<Record<string, ReplySpec>>
  /** Error codes the handler itself may answer (auth, query and body errors are added by their kind). */
  errors?: Varies<DomainErrorCode[]>
  handle: Varies<Handler>
}

/** Declares a route; typed query and body for handlers that take them. */
export function defineRoute<Q = unknown, B = unknown>(
  spec: Omit<RouteSpec, 'handle'> & { handle: Varies<(input: RouteInput<Q, B>) => Promise<RouteReply>> },
): RouteSpec {
  return spec as RouteSpec
}

export const bodiesOf = (spec: RouteSpec, form: ApiForm): BodySpec[] => {
  const b = forForm(spec.body, form)
  return b === undefined ? [] : Array.isArray(b) ? b : [b]
}

const AUTH_ERRORS: Record<Auth, DomainErrorCode[]> = {
  key: ['unauthorized', 'insufficient_scope'],
  admin: ['unauthorized'],
  'optional-key': ['unauthorized'],
  none: [],
}
const JSON_BODY_ERRORS: DomainErrorCode[] = ['INVALID_PARAMETER', 'MALFORMED_REQUEST', 'UNSUPPORTED_MEDIA_TYPE']
const MULTIPART_ERRORS: DomainErrorCode[] = [
  'INVALID_PARAMETER',
  'MALFORMED_REQUEST',
  'UNSUPPORTED_MEDIA_TYPE',
  'UNKNOWN_PARAMETER',
  'TOO_MANY_FILES',
  'TOO_MANY_FIELDS',
  'FIELDS_TOO_LARGE',
  'FILE_TOO_LARGE',
]

/** Every error code the route may answer in a form: its own, plus those its auth, query and bodies imply. */
export function declaredErrors(spec: RouteSpec, form: ApiForm): DomainErrorCode[] {
  const codes = [...AUTH_ERRORS[spec.auth]]
  // Any request may be malformed HTTP, carry oversized headers or arrive too slowly (answered before routing, by
  // http/client-error.ts); any query string may carry a NUL; anything that reads a dependency may find it down.
  codes.push('MALFORMED_REQUEST', 'HEADERS_TOO_LARGE', 'REQUEST_TIMEOUT', 'VALIDATION_ERROR')
  if (spec.usesDependencies !== false) codes.push('SERVICE_UNAVAILABLE')
  if (forForm(spec.query, form)) codes.push('INVALID_PARAMETER')
  for (const b of bodiesOf(spec, form)) codes.push(...(b.kind === 'json' ? JSON_BODY_ERRORS : MULTIPART_ERRORS))
  codes.push(...(forForm(spec.errors, form) ?? []))
  return [...new Set(codes)]
}

/** `/v1/jobs/{job_id}` → `/v1/jobs/:job_id` (Koa's template). */
export const koaPath = (template: string): string => template.replace(/\{(\w+)\}/g, ':$1')

/** The names a multipart body accepts, derived from its declaration: anything else is 400 UNKNOWN_PARAMETER. */
export function acceptedParameters(body: MultipartBodySpec): SubmitParameters {
  const text = Object.keys(body.fields.shape)
  return { fileField: body.fileField, text, query: body.fieldsInQuery ? text : [] }
}
