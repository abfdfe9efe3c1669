import {
  boundWebhookIds,
  type DefinitionIssue,
  DomainError,
  newId,
  parsePipelineDefinition,
  PipelineDefinition,
} from '@quire/domain'
import { resolveSchema } from '@quire/extraction'
import { type Db, directQuery } from '@quire/db'
import { recordEvents } from '../events/record-event.ts'

/** The platform-provided parse pipeline every workspace can use. */
export const PLATFORM_PARSE_PIPELINE_ID = 'parse'

export type PipelineVersionView = {
  version: number
  published: boolean
  published_at: string | null
  created_at: string
}
export type PipelineView = {
  id: string
  name: string
  platform: boolean
  latest_published_version: number | null
  versions: PipelineVersionView[]
  created_at: string
}

export async function ensurePlatformPipelines(db: Db): Promise<void> {
  await db.pipeline.upsert({
    where: { id: PLATFORM_PARSE_PIPELINE_ID },
    update: {},
    create: {
      id: PLATFORM_PARSE_PIPELINE_ID,
      name: 'Parse',
      workspaceId: null,
      versions: {
        create: {
          id: 'pv_parse_1',
          version: 1,
          definition: PipelineDefinition.parse({ routing: { catch_all_schema_id: 'generic' } }) as object,
          publishedAt: new Date(),
        },
      },
    },
  })
}

async function validDefinition(db: Db, workspaceId: string, input: unknown) {
  const parsed = parsePipelineDefinition(input)
  const issues = parsed.ok
    ? [...undeclaredSchemas(parsed.definition), ...(await unknownWebhooks(db, workspaceId, parsed.definition))]
    : parsed.issues
  if (!parsed.ok || issues.length > 0) {
    throw new DomainError('INVALID_DEFINITION', 'pipeline definition is invalid', { issues })
  }
  return parsed.definition
}

/** Bindings the spec accepts but never fires (`source.entered`, the edit stage): their ids are not checked. */
const neverFires = (stage: string, side: 'entry_webhook_id' | 'exit_webhook_id') =>
  stage === 'edit' || (stage === 'source' && side === 'entry_webhook_id')

/**
 * Every webhook a definition binds to a stage that fires must be one of the workspace's own: a binding to an id that
 * names no webhook (or another workspace's) would be accepted and then deliver nothing, with no one told.
 */
async function unknownWebhooks(
  db: Db,
  workspaceId: string,
  definition: PipelineDefinition,
): Promise<DefinitionIssue[]> {
  const bound = boundWebhookIds(definition)
  if (bound.length === 0) return []
  const found = await db.webhook.findMany({ where: { workspaceId, id: { in: bound } }, select: { id: true } })
  const known = new Set(found.map((w) => w.id))
  const issues: DefinitionIssue[] = []
  for (const [stage, binding] of Object.entries(definition.bindings)) {
    for (const side of ['entry_webhook_id', 'exit_webhook_id'] as const) {
      const id = binding?.[side]
      if (id !== undefined && !known.has(id) && !neverFires(stage, side)) {
        issues.push({ path: `bindings.${stage}.${side}`, message: `webhook ${id} is not one of this workspace's` })
      }
    }
  }
  return issues
}

/**
 * Every schema a definition routes documents to must exist: declared in `schemas` or built in (`invoice`,
 * `generic`; DESIGN, Extraction). An unknown id would otherwise extract nothing for every document routed to it,
 * while a submission naming an unknown `schema_id` is refused.
 */
function undeclaredSchemas(definition: PipelineDefinition): DefinitionIssue[] {
  const known = (id: string) => resolveSchema(id, definition.schemas) !== null
  const issues: DefinitionIssue[] = []
  definition.document_types.forEach((t, i) => {
    if (t.schema_id !== undefined && !known(t.schema_id))
      issues.push({
        path: `document_types.${i}.schema_id`,
        message: `schema ${t.schema_id} is not declared or built in`,
      })
  })
  if (!known(definition.routing.catch_all_schema_id))
    issues.push({
      path: 'routing.catch_all_schema_id',
      message: `schema ${definition.routing.catch_all_schema_id} is not declared or built in`,
    })
  return issues
}

type PipelineWithVersions = Awaited<ReturnType<typeof loadPipeline>>

async function loadPipeline(db: Db, workspaceId: string, id: string) {
  const p = await db.pipeline.findFirst({
    where: { id, OR: [{ workspaceId }, { workspaceId: null }] },
    include: { versions: { orderBy: { version: 'asc' } } },
  })
  if (!p) throw new DomainError('PIPELINE_NOT_FOUND', `pipeline ${id} not found`)
  return p
}

function toView(p: PipelineWithVersions): PipelineView {
  const published = p.versions.filter((v) => v.publishedAt)
  return {
    id: p.id,
    name: p.name,
    platform: p.workspaceId === null,
    latest_published_version: published.at(-1)?.version ?? null,
    versions: p.versions.map((v) => ({
      version: v.version,
      published: v.publishedAt !== null,
      published_at: v.publishedAt?.toISOString() ?? null,
      created_at: v.createdAt.toISOString(),
    })),
    created_at: p.createdAt.toISOString(),
  }
}

export async function createPipeline(opts: { db: Db; workspaceId: string; name: string; definition: unknown }) {
  const definition = await validDefinition(opts.db, opts.workspaceId, opts.definition)
  const id = newId('pl')
  await opts.db.pipeline.create({
    data: {
      id,
      workspaceId: opts.workspaceId,
      name: opts.name,
      versions: { create: { id: newId('pv'), version: 1, definition: definition as object } },
    },
  })
  return getPipeline({ db: opts.db, workspaceId: opts.workspaceId, pipelineId: id })
}

export async function createPipelineVersion(opts: {
  db: Db
  workspaceId: string
  pipelineId: string
  definition: unknown
}) {
  const definition = await validDefinition(opts.db, opts.workspaceId, opts.definition)
  const p = await loadPipeline(opts.db, opts.workspaceId, opts.pipelineId)
  if (p.workspaceId === null) throw new DomainError('not_found', 'platform pipelines cannot be changed')
  // Two versions created at once would both take max + 1: the pipeline's row lock orders them.
  const next = await opts.db.$transaction(async (tx) => {
    await tx.$queryRaw`SELECT id FROM pipelines WHERE id = ${p.id} FOR UPDATE`
    const last = await tx.pipelineVersion.findFirst({
      where: { pipelineId: p.id },
      orderBy: { version: 'desc' },
      select: { version: true },
    })
    const version = (last?.version ?? 0) + 1
    await tx.pipelineVersion.create({
      data: { id: newId('pv'), pipelineId: p.id, version, definition: definition as object },
    })
    return version
  })
  return { ...(await getPipeline({ db: opts.db, workspaceId: opts.workspaceId, pipelineId: p.id })), version: next }
}

export async function publishPipelineVersion(opts: {
  db: Db
  workspaceId: string
  pipelineId: string
  version: number
}) {
  const p = await loadPipeline(opts.db, opts.workspaceId, opts.pipelineId)
  if (p.workspaceId === null) throw new DomainError('not_found', 'platform pipelines cannot be changed')
  const v = p.versions.find((x) => x.version === opts.version)
  if (!v) throw new DomainError('VERSION_NOT_FOUND', `pipeline ${p.id} has no version ${opts.version}`)
  if (!v.publishedAt) {
    await opts.db.$transaction(async (tx) => {
      await tx.pipelineVersion.update({ where: { id: v.id }, data: { publishedAt: new Date() } })
      await recordEvents(tx, [
        { workspaceId: opts.workspaceId, type: 'pipeline.deployed', data: { pipeline_id: p.id, version: v.version } },
      ])
    })
  }
  return getPipeline({ db: opts.db, workspaceId: opts.workspaceId, pipelineId: p.id })
}

export async function getPipeline(opts: { db: Db; workspaceId: string; pipelineId: string }): Promise<PipelineView> {
  return toView(await loadPipeline(opts.db, opts.workspaceId, opts.pipelineId))
}

export async function getPipelineDefinition(opts: {
  db: Db
  workspaceId: string
  pipelineId: string
  version: number
}) {
  const p = await loadPipeline(opts.db, opts.workspaceId, opts.pipelineId)
  const v = p.versions.find((x) => x.version === opts.version)
  if (!v) throw new DomainError('VERSION_NOT_FOUND', `pipeline ${p.id} has no version ${opts.version}`)
  return v.definition
}

export async function listPipelines(opts: { db: Db; workspaceId: string; page: number; pageSize: number }) {
  const where = { OR: [{ workspaceId: opts.workspaceId }, { workspaceId: null }] }
  const [rows, total] = await Promise.all([
    opts.db.pipeline.findMany({
      where,
      include: { versions: { orderBy: { version: 'asc' } } },
      orderBy: [{ createdAt: 'asc' }, { id: 'asc' }],
      skip: (opts.page - 1) * opts.pageSize,
      take: opts.pageSize,
    }),
    opts.db.pipeline.count({ where }),
  ])
  return { data: rows.map(toView), total }
}

const MAX_INT = 2_147_483_647

export type ResolvedPipeline = {
  pipelineId: string
  version: number
  definition: PipelineDefinition
  /** The definition as JSON, as a job stores it (made once per version). */
  definitionJson: string
}

/**
 * Picks the pipeline and version a submission runs: the request's pipeline, else the key's bound pipeline, else the
 * workspace default, else the platform parse pipeline. A pinned version must exist; drafts only when allowed.
 */
export async function resolvePipeline(opts: {
  db: Db
  workspaceId: string
  requestedPipelineId?: string | null
  boundPipelineId?: string | null
  /** The workspace's default pipeline when the caller already read it (undefined: read it here). */
  workspaceDefaultPipelineId?: string | null
  /** The version a request naming no pipeline and no version runs, when the caller read it with the key. */
  defaultRun?: { pipelineId: string; version: number } | null
  version?: number | null
  allowDraftVersion: boolean
}): Promise<ResolvedPipeline> {
  if (!opts.requestedPipelineId && opts.version == null && opts.defaultRun) {
    const { pipelineId, version } = opts.defaultRun
    return { pipelineId, version, ...(await versionDefinition(opts.db, pipelineId, version)) }
  }
  let pipelineId = opts.requestedPipelineId || opts.boundPipelineId || null
  if (!pipelineId) {
    const defaultId =
      opts.workspaceDefaultPipelineId !== undefined
        ? opts.workspaceDefaultPipelineId
        : (await opts.db.workspace.findUniqueOrThrow({ where: { id: opts.workspaceId } })).defaultPipelineId
    pipelineId = defaultId ?? PLATFORM_PARSE_PIPELINE_ID
  }
  // A pinned version no `integer` column can hold names no version (not a database error).
  const pinned =
    opts.version == null
      ? null
      : Number.isSafeInteger(opts.version) && Math.abs(opts.version) <= MAX_INT
        ? opts.version
        : -1
  // One statement on every submission's path: the pipeline (if the workspace may use it) with the version to run, the
  // pinned one or else the latest published; no version row means the pinned one does not exist or none is published.
  // The definition itself comes from the process's cache of versions (immutable once written), read on a miss only.
  const [row] = await directQuery<{ id: string; version: number | null; published: boolean | null }>(opts.db, {
    name: 'resolve_pipeline',
    text: `SELECT p.id, v.version, v.published_at IS NOT NULL AS published
           FROM pipelines p
           LEFT JOIN LATERAL (
             SELECT version, published_at FROM pipeline_versions
             WHERE pipeline_id = p.id
               AND CASE WHEN $1::int IS NULL THEN published_at IS NOT NULL ELSE version = $1::int END
             ORDER BY version DESC LIMIT 1
           ) v ON true
           WHERE p.id = $2 AND (p.workspace_id = $3 OR p.workspace_id IS NULL)`,
    values: [pinned, pipelineId, opts.workspaceId],
  })
  if (!row) throw new DomainError('PIPELINE_NOT_FOUND', `pipeline ${pipelineId} not found`)
  if (row.version === null) {
    if (opts.version != null) {
      throw new DomainError('VERSION_NOT_FOUND', `pipeline ${row.id} has no version ${opts.version}`)
    }
    throw new DomainError('PIPELINE_NOT_PUBLISHED', `pipeline ${row.id} has no published version`)
  }
  if (!row.published && !opts.allowDraftVersion) {
    throw new DomainError('PIPELINE_NOT_PUBLISHED', `version ${opts.version} of pipeline ${row.id} is not published`)
  }
  return { pipelineId: row.id, version: row.version, ...(await versionDefinition(opts.db, row.id, row.version)) }
}

function deepFreeze<T>(value: T): T {
  if (value && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value)
    for (const v of Object.values(value)) deepFreeze(v)
  }
  return value
}

type VersionDefinition = Pick<ResolvedPipeline, 'definition' | 'definitionJson'>

/** Versions resolved lately, parsed: a version's definition never changes once written (only its publication). */
const versionDefinitions = new Map<string, VersionDefinition>()
const VERSION_DEFINITIONS_KEPT = 500

async function versionDefinition(db: Db, pipelineId: string, version: number): Promise<VersionDefinition> {
  const key = `${pipelineId}@${version}`
  const known = versionDefinitions.get(key)
  if (known) return known
  const [row] = await directQuery<{ definition: unknown }>(db, {
    name: 'pipeline_version_definition',
    text: 'SELECT definition FROM pipeline_versions WHERE pipeline_id = $1 AND version = $2',
    values: [pipelineId, version],
  })
  if (!row) throw new DomainError('VERSION_NOT_FOUND', `pipeline ${pipelineId} has no version ${version}`)
  // Shared by every submission that resolves this version: frozen, so no caller can change it for the others.
  const definition = deepFreeze(PipelineDefinition.parse(row.definition))
  const entry = { definition, definitionJson: JSON.stringify(definition) }
  if (versionDefinitions.size >= VERSION_DEFINITIONS_KEPT)
    versionDefinitions.delete(versionDefinitions.keys().next().value!)
  versionDefinitions.set(key, entry)
  return entry
}
