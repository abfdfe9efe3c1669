import { createHash, randomBytes } from 'node:crypto'
import { DomainError, newId, SCOPES, type Scope } from '@quire/domain'
import { type ApiForm, type Db, directQuery } from '@quire/db'
import { PLATFORM_PARSE_PIPELINE_ID } from '../pipelines/pipelines.ts'

const hashKey = (key: string) => createHash('sha256').update(key).digest('hex')

export type CreatedApiKey = { id: string; key: string; scopes: string[]; pipeline_id: string | null }

/** Issues a key; the plain key is returned once and only its hash is stored. */
export async function createApiKey(opts: {
  db: Db
  workspaceId: string
  scopes: string[]
  pipelineId?: string | null
}): Promise<CreatedApiKey> {
  const unknown = opts.scopes.filter((s) => !(SCOPES as readonly string[]).includes(s))
  if (unknown.length) throw new DomainError('INVALID_PARAMETER', `unknown scopes: ${unknown.join(', ')}`)
  const ws = await opts.db.workspace.findUnique({ where: { id: opts.workspaceId } })
  if (!ws) throw new DomainError('not_found', 'workspace not found')
  if (opts.pipelineId) {
    const p = await opts.db.pipeline.findFirst({
      where: { id: opts.pipelineId, OR: [{ workspaceId: ws.id }, { workspaceId: null }] },
    })
    if (!p) throw new DomainError('PIPELINE_NOT_FOUND', `pipeline ${opts.pipelineId} not found`)
  }
  const key = `qk_${randomBytes(24).toString('base64url')}`
  const id = newId('key')
  await opts.db.apiKey.create({
    data: {
      id,
      workspaceId: ws.id,
      keyHash: hashKey(key),
      keyPrefix: key.slice(0, 8),
      scopes: opts.scopes,
      pipelineId: opts.pipelineId ?? null,
    },
  })
  return { id, key, scopes: opts.scopes, pipeline_id: opts.pipelineId ?? null }
}

export type Principal = {
  keyId: string
  workspaceId: string
  apiForm: ApiForm
  scopes: Scope[]
  boundPipelineId: string | null
  /** The workspace's default pipeline as read with the key (saves resolving it again per submission). */
  workspaceDefaultPipelineId: string | null
  /**
   * What a submission that names no pipeline and no version runs, read with the key: the key's bound pipeline, else
   * the workspace default, else the platform parse pipeline, at its latest published version. Null when that
   * pipeline is not the workspace's to use or has no published version (resolvePipeline then says why).
   */
  defaultRun: { pipelineId: string; version: number } | null
}

/**
 * Revokes a workspace's key: every API process refuses it from its next request (authenticateApiKey reads it each
 * time). Revoking a revoked key changes nothing and answers when it was revoked; a key of another workspace is not
 * found.
 */
export async function revokeApiKey(opts: {
  db: Db
  workspaceId: string
  keyId: string
}): Promise<{ id: string; revoked_at: string }> {
  await opts.db.apiKey.updateMany({
    where: { id: opts.keyId, workspaceId: opts.workspaceId, revokedAt: null },
    data: { revokedAt: new Date() },
  })
  const key = await opts.db.apiKey.findFirst({ where: { id: opts.keyId, workspaceId: opts.workspaceId } })
  if (!key?.revokedAt) throw new DomainError('not_found', `no API key ${opts.keyId} in workspace ${opts.workspaceId}`)
  return { id: key.id, revoked_at: key.revokedAt.toISOString() }
}

/**
 * The principal of a key that is not revoked, or null. Read on every request, never cached: revoking a key
 * (`revoked_at`, set in PostgreSQL by any process) or changing its workspace takes effect on the next request. One
 * prepared statement (the key joined to its workspace, with the pipeline version a submission naming none runs) on
 * every authenticated request's path.
 */
export async function authenticateApiKey(opts: { db: Db; key: string }): Promise<Principal | null> {
  if (!opts.key) return null
  const [row] = await directQuery<{
    id: string
    workspace_id: string
    api_form: ApiForm
    scopes: string[]
    pipeline_id: string | null
    default_pipeline_id: string | null
    run_pipeline_id: string | null
    run_version: number | null
  }>(opts.db, {
    name: 'authenticate_api_key',
    text: `SELECT k.id, k.workspace_id, w.api_form::text AS api_form, k.scopes, k.pipeline_id, w.default_pipeline_id,
                  run.pipeline_id AS run_pipeline_id, run.version AS run_version
           FROM api_keys k JOIN workspaces w ON w.id = k.workspace_id
           LEFT JOIN LATERAL (
             SELECT v.pipeline_id, v.version FROM pipelines p JOIN pipeline_versions v ON v.pipeline_id = p.id
             WHERE p.id = COALESCE(k.pipeline_id, w.default_pipeline_id, $2)
               AND (p.workspace_id = k.workspace_id OR p.workspace_id IS NULL) AND v.published_at IS NOT NULL
             ORDER BY v.version DESC LIMIT 1
           ) run ON true
           WHERE k.key_hash = $1 AND k.revoked_at IS NULL`,
    values: [hashKey(opts.key), PLATFORM_PARSE_PIPELINE_ID],
  })
  if (!row) return null
  return {
    keyId: row.id,
    workspaceId: row.workspace_id,
    apiForm: row.api_form,
    scopes: row.scopes as Scope[],
    boundPipelineId: row.pipeline_id,
    workspaceDefaultPipelineId: row.default_pipeline_id,
    defaultRun:
      row.run_pipeline_id !== null && row.run_version !== null
        ? { pipelineId: row.run_pipeline_id, version: row.run_version }
        : null,
  }
}
