import Router from '@koa/router'
import {
  authenticateApiKey,
  type KeyState,
  type Principal,
  PrincipalChanged,
  RecentPrincipals,
  recordQuarantine,
} from '@quire/core'
import { DomainError, parseInput, PLATFORM_MAX_FILE_MB, unstorableText } from '@quire/domain'
import { type ApiForm, formProfile } from '@quire/forms'
import type { Middleware } from 'koa'
import { adminTokenMatches } from '../middleware/authenticate.ts'
import {
  acceptedParameters,
  bodiesOf,
  type BodySpec,
  declaredErrors,
  forForm,
  koaPath,
  type MultipartBodySpec,
  type RouteInput,
  type RouteReply,
  type RouteSpec,
} from '../routes/route.ts'
import { serviceUnavailable, toClientError } from './body-errors.ts'
import { errorResponse } from './errors.ts'
import type { AppDeps, AppState, Ctx } from './context.ts'
import { jsonBody } from './json-body.ts'
import { allFilesOf, fieldsOf, multipartMiddleware } from './multipart.ts'
import { first } from './validate.ts'

const MB = 1024 * 1024
/** Routes without a form of their own (admin, operations) resolve their declarations as this form. */
const NEUTRAL_FORM: ApiForm = 'A'

/**
 * How long a key's principal may serve the routes whose write confirms the key (`confirmsKeyInWrite`) without being
 * read again, and for how many keys. The confirmation keeps a revocation effective from the next request; the age
 * only bounds how long a revoked key's uploads are still read before the 401.
 */
const RECENT_PRINCIPAL_MS = 60_000
const RECENT_PRINCIPAL_KEYS = 10_000

/** Who a request is served for: the principal, and the key state its write must confirm when it was read earlier. */
type Served = { principal: Principal | null; confirmKey: KeyState | null }

/**
 * Serves every declared route: authentication and scope from `auth`/`scopes`, query and body parsed and validated
 * with the declared schemas (multipart parameter names included, so an undeclared one is UNKNOWN_PARAMETER), then
 * the handler. What the handler answers is checked against the declaration: a status or error code the route does
 * not list is logged, and with `enforceApiContract` (tests) answered as a 500, so the API and its OpenAPI document
 * cannot drift apart unseen.
 */
export function mountRoutes(deps: AppDeps, routes: readonly RouteSpec[]): Router<AppState> {
  const router = new Router<AppState>()
  const recent = new RecentPrincipals({ maxAgeMs: RECENT_PRINCIPAL_MS, maxKeys: RECENT_PRINCIPAL_KEYS })
  const json = jsonBody()
  const multiparts = new Map<MultipartBodySpec, Middleware>()
  const multipartFor = (spec: MultipartBodySpec) => {
    let m = multiparts.get(spec)
    if (!m) {
      const accepted = acceptedParameters(spec)
      m = multipartMiddleware({
        uploadDir: deps.config.uploadDir,
        maxFileBytes: PLATFORM_MAX_FILE_MB * MB,
        maxFiles: deps.config.maxFilesPerRequest,
        parameters: () => accepted,
        earlierFilesStand: spec.earlierFilesStand,
      })
      multiparts.set(spec, m)
    }
    return m
  }

  for (const spec of routes) {
    router[spec.method](koaPath(spec.path), async (koaCtx) => {
      const ctx = koaCtx as unknown as Ctx
      let form: ApiForm = NEUTRAL_FORM
      const served: Served = { principal: null, confirmKey: null }
      try {
        rejectNulInPath(spec, ctx)
        if (outageAnswered(spec, deps)) throw serviceUnavailable()
        Object.assign(served, await authenticate(spec, ctx, deps, spec.confirmsKeyInWrite ? recent : null))
        form = served.principal?.apiForm ?? NEUTRAL_FORM
        const reply = await answer(spec, form, ctx, deps, routes, served, { json, multipartFor, recent })
        if (!Object.hasOwn(forForm(spec.responses, form), String(reply.status))) {
          undeclared(deps, spec, { status: reply.status })
        }
        ctx.status = reply.status
        if (reply.type) ctx.type = reply.type
        if (reply.headers) ctx.set(reply.headers)
        ctx.body = reply.body
      } catch (raw) {
        const err = toClientError(raw)
        if (err && !declaredErrors(spec, form).includes(err.code)) undeclared(deps, spec, { code: err.code })
        if (err?.code === 'FILE_TOO_LARGE' && served.principal) await quarantineOversizeFile(deps, served, err)
        throw err ?? raw
      }
    })
  }
  return router
}

/**
 * A file cut off at the platform's per-file limit while it streamed is refused at intake like one of the wrong type
 * (spec: `doc.quarantined`, "size or type"). Recording it never replaces the 413 the client is owed.
 */
async function quarantineOversizeFile(deps: AppDeps, served: Served, err: DomainError) {
  try {
    await recordQuarantine({
      db: deps.db,
      workspaceId: served.principal!.workspaceId,
      fileName: String(err.details?.file_name ?? ''),
      reason: 'size',
      message: err.message,
      confirmKey: served.confirmKey,
    })
  } catch (e) {
    // A key revoked or changed since this process read it records nothing for the upload.
    if (e instanceof PrincipalChanged) return
    deps.log.warn({ err: e }, 'could not record the quarantine of an oversized upload')
  }
}

/**
 * DESIGN (Robustness): while a dependency is down, endpoints answer 503 SERVICE_UNAVAILABLE with Retry-After.
 * PostgreSQL's outage is met by the request's own queries (their errors become the 503); Redis's is decided up
 * front from the connection's state, since most requests would not touch Redis and would otherwise be answered
 * as if nothing were wrong while no work can move.
 */
const outageAnswered = (spec: RouteSpec, deps: AppDeps): boolean =>
  spec.usesDependencies !== false && !spec.reportsOutages && deps.redisDown()

const NUL = '\u0000'

/**
 * PostgreSQL refuses NUL in text, so a NUL anywhere in a request would surface as a database error. An id with one
 * cannot name anything (the route's 404); any other string with one is 400 VALIDATION_ERROR.
 */
function rejectNulInPath(spec: RouteSpec, ctx: Ctx) {
  if (!Object.values(ctx.params ?? {}).some((v) => v.includes(NUL))) return
  const notFound = declaredErrors(spec, NEUTRAL_FORM).find((c) => errorResponse(new DomainError(c, '')).status === 404)
  throw new DomainError(notFound ?? 'VALIDATION_ERROR', notFound ? 'no such resource' : 'a path segment contains NUL')
}

/** No Quire input nests anywhere near this deep; deeper is refused rather than walked (or passed on unchecked). */
const MAX_DEPTH = 64

/**
 * What the body parsers make of bytes that are not UTF-8 (JSON, query and multipart text are all decoded with
 * replacement). A client never means U+FFFD, so its presence is how invalid UTF-8 is recognised after decoding.
 */
const REPLACEMENT = '\uFFFD'

/**
 * DESIGN (Robustness): NUL bytes or invalid UTF-8 in any string are the client's error, 400 VALIDATION_ERROR; a NUL
 * would otherwise surface as a database error (PostgreSQL refuses it in text).
 */
function rejectBadText(value: unknown, where: string, depth = 0): void {
  if (depth > MAX_DEPTH && value !== null && typeof value === 'object') {
    throw new DomainError('VALIDATION_ERROR', `${where}: nested deeper than ${MAX_DEPTH} levels`)
  }
  if (typeof value === 'string') {
    const unstorable = unstorableText(value)
    if (unstorable === 'nul') throw new DomainError('VALIDATION_ERROR', `${where}: text may not contain NUL characters`)
    if (value.includes(REPLACEMENT)) throw new DomainError('VALIDATION_ERROR', `${where}: text is not valid UTF-8`)
    // A JSON escape of half a surrogate pair ("\ud800") decodes to text that is not Unicode.
    if (unstorable === 'lone-surrogate') {
      throw new DomainError('VALIDATION_ERROR', `${where}: text holds a lone surrogate`)
    }
  } else if (Array.isArray(value)) {
    for (const v of value) rejectBadText(v, where, depth + 1)
  } else if (value && typeof value === 'object') {
    for (const [k, v] of Object.entries(value)) {
      rejectBadText(k, where, depth + 1)
      rejectBadText(v, `${where}.${k}`, depth + 1)
    }
  }
}

/**
 * The request's principal, from its key. With `recent` (routes whose write confirms the key) a principal this
 * process read on an earlier request serves it, with the key state to confirm; otherwise the key is read now.
 */
async function authenticate(
  spec: RouteSpec,
  ctx: Ctx,
  deps: AppDeps,
  recent: RecentPrincipals | null,
): Promise<Served> {
  const unauthenticated: Served = { principal: null, confirmKey: null }
  if (spec.auth === 'none') return unauthenticated
  if (spec.auth === 'admin') {
    if (!adminTokenMatches(ctx.get('Authorization'), deps.config.adminToken)) {
      throw new DomainError('unauthorized', 'invalid admin token')
    }
    return unauthenticated
  }
  const key = ctx.get('X-API-Key')
  if (!key) {
    if (spec.auth === 'optional-key') return unauthenticated
    throw new DomainError('unauthorized', 'missing API key: send it in the X-API-Key header')
  }
  const kept = recent?.get(key)
  const principal = kept ?? (await authenticateApiKey({ db: deps.db, key }))
  if (!principal) throw new DomainError('unauthorized', 'invalid API key')
  if (recent && !kept) recent.remember(principal)
  ctx.state.principal = principal
  const scopes = forForm(spec.scopes, principal.apiForm)
  if (scopes && !scopes.some((s) => principal.scopes.includes(s))) {
    throw new DomainError('insufficient_scope', `this API key lacks the required scope ${scopes.join(' or ')}`)
  }
  return { principal, confirmKey: kept ? principal.asRead : null }
}

/** What mountRoutes makes once for all routes: the body parsers and the principals read lately. */
type Shared = {
  json: Middleware
  multipartFor: (spec: MultipartBodySpec) => Middleware
  recent: RecentPrincipals
}

async function answer(
  spec: RouteSpec,
  form: ApiForm,
  ctx: Ctx,
  deps: AppDeps,
  routes: readonly RouteSpec[],
  served: Served,
  shared: Shared,
): Promise<RouteReply> {
  rejectBadText(ctx.query, 'query')
  const querySpec = forForm(spec.query, form)
  const query = querySpec ? parseInput(querySpec.schema, singleValues(ctx.query)) : {}
  const input = (body: unknown, bodyKind: BodySpec['kind'] | null): RouteInput => ({
    ctx,
    deps,
    principal: served.principal as Principal,
    confirmKey: served.confirmKey,
    profile: formProfile(form),
    params: ctx.params,
    query,
    body,
    bodyKind,
    routes,
  })
  const handler = forForm(spec.handle, form)
  const handle = async (routeInput: RouteInput): Promise<RouteReply> => {
    try {
      return await handler(routeInput)
    } catch (err) {
      if (!(err instanceof PrincipalChanged && served.principal && served.confirmKey)) throw err
      // The key changed since this process read it (revoked, another default pipeline, a newer published version)
      // and nothing was written: the request is served again under the key read afresh (or answered 401/403).
      shared.recent.forget(served.principal)
      Object.assign(served, await authenticate(spec, ctx, deps, shared.recent))
      return handler({ ...routeInput, principal: served.principal as Principal, confirmKey: served.confirmKey })
    }
  }
  const bodies = bodiesOf(spec, form)
  if (bodies.length === 0) return handle(input(undefined, null))

  const chosen = chooseBody(ctx, bodies)
  let reply: RouteReply | undefined
  if (chosen.kind === 'json') {
    await shared.json(ctx, async () => {
      const raw = ctx.request.body ?? {}
      rejectBadText(raw, 'body')
      const body = chosen.validate === 'handler' ? raw : parseInput(chosen.schema, raw)
      reply = await handle(input(body, 'json'))
    })
  } else {
    await shared.multipartFor(chosen)(ctx, async () => {
      const fields = fieldsOf(ctx)
      rejectBadText(fields, 'form field')
      // File names too, all of them before any job is created; other control characters are sanitised later.
      for (const f of allFilesOf(ctx)) rejectBadText(f.originalFilename ?? '', 'file name')
      const values: Record<string, string | undefined> = {}
      for (const name of Object.keys(chosen.fields.shape)) {
        const given = [...asList(fields[name]), ...(chosen.fieldsInQuery ? asList(ctx.query[name]) : [])]
        // One value per parameter: a second one (the field repeated, or sent in the form and in the query) is
        // refused rather than one of them being dropped without a word.
        if (given.length > 1) throw new DomainError('INVALID_PARAMETER', `${name}: given ${given.length} times`)
        values[name] = first(given[0])
      }
      reply = await handle(input(parseInput(chosen.fields, values), 'multipart'))
    })
  }
  if (!reply) throw new Error(`${operationIdOf(spec)}: the body parser did not reach the handler`)
  return reply
}

/**
 * The declared body the request's Content-Type names. A single JSON body also takes a request that says nothing of a
 * body (no Content-Type, or no body at all, as `curl -X POST -d ''` sends); a body of another type is 415, not read
 * as an empty object (which answered a misleading "name: expected string").
 */
function chooseBody(ctx: Ctx, bodies: BodySpec[]): BodySpec {
  const byType = bodies.find((b) => ctx.is(b.kind === 'json' ? 'application/json' : 'multipart/form-data'))
  if (byType) return byType
  const saysNothing = !ctx.get('Content-Type') || ctx.is() === null
  if (bodies.length === 1 && bodies[0]!.kind === 'json' && saysNothing) return bodies[0]!
  const accepted = bodies.map((b) => (b.kind === 'json' ? 'application/json' : 'multipart/form-data'))
  throw new DomainError('UNSUPPORTED_MEDIA_TYPE', `send ${accepted.join(', or ')}`)
}

/**
 * A parameter given more than once reads as its values joined by commas, as a list parameter writes them
 * (`include=stages&include=result` is `include=stages,result`); a single-valued one then fails its own check (400)
 * instead of one of the values being dropped without a word.
 */
const asList = (v: unknown): unknown[] => (v === undefined ? [] : Array.isArray(v) ? v : [v])

function singleValues(query: Record<string, string | string[] | undefined>): Record<string, string | undefined> {
  return Object.fromEntries(Object.entries(query).map(([k, v]) => [k, Array.isArray(v) ? v.join(',') : v]))
}

function undeclared(deps: AppDeps, spec: RouteSpec, what: { status?: number; code?: string }) {
  deps.log.error({ operationId: operationIdOf(spec), ...what }, 'response not declared by its route')
  if (deps.config.enforceApiContract) {
    throw new Error(`${operationIdOf(spec)} answered ${what.code ?? what.status}, which its declaration does not list`)
  }
}

/** The route's name in logs and errors (its Form A name when the forms name it differently). */
function operationIdOf(spec: RouteSpec): string {
  return forForm(spec.operationId, 'A')
}
