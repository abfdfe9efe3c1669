import { createHash, randomBytes } from 'node:crypto'
import { DomainError, newId, SCOPES, type Scope } from '@quire/domain'
import { type ApiForm, type Db, directQuery, type Tx } from '@quire/db'
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
  /** The key and the principal as read, for a write that confirms the key still has it (createJob's `confirmKey`). */
  asRead: KeyState
}

/**
 * A key (by its hash) and the fingerprint of its principal when it was read: an md5 of every field of the principal,
 * made by the SQL function `api_key_principal`, which `submit_jobs` calls again to confirm it.
 */
export type KeyState = { keyHash: string; fingerprint: string }

/**
 * The API key was revoked, or its principal changed (another default pipeline, a newer published version), since the
 * principal a write was asked to confirm was read. Nothing was written; the request is to be served again under the
 * key read afresh. Never an answer in itself.
 */
export class PrincipalChanged extends Error {
  constructor() {
    super('the API key changed since its principal was read')
    this.name = 'PrincipalChanged'
  }
}

/**
 * Confirms, inside a write's transaction, that the key still has the principal `state` names; throws
 * PrincipalChanged (rolling the transaction back) when it does not. For writes that are not `submit_jobs`, which
 * confirms in its own statement.
 */
export async function confirmKeyIn(tx: Pick<Tx, '$queryRaw'>, state: KeyState): Promise<void> {
  const [row] = await tx.$queryRaw<{ confirmed: boolean }[]>`
    SELECT EXISTS (
      SELECT 1 FROM api_key_principal(${state.keyHash}, ${PLATFORM_PARSE_PIPELINE_ID})
      WHERE fingerprint = ${state.fingerprint}
    ) AS confirmed`
  if (!row?.confirmed) throw new PrincipalChanged()
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
 * The principal of a key that is not revoked, or null. Read afresh for every request whose writes do not confirm the
 * key themselves: revoking a key (`revoked_at`, set in PostgreSQL by any process) or changing its workspace takes
 * effect on the next request. One prepared statement (the key joined to its workspace, with the pipeline version a
 * submission naming none runs). Submissions may be served under a principal read on an earlier request instead
 * (`RecentPrincipals`): their one statement confirms it (createJob's `confirmKey`).
 */
export async function authenticateApiKey(opts: { db: Db; key: string }): Promise<Principal | null> {
  if (!opts.key) return null
  const keyHash = hashKey(opts.key)
  const [row] = await directQuery<{
    id: string
    workspace_id: string
    api_form: ApiForm
    scopes: string[]
    pipeline_id: string | null
    default_pipeline_id: string | null
    run_pipeline_id: string | null
    run_version: number | null
    fingerprint: string
  }>(opts.db, {
    name: 'authenticate_api_key',
    // The function (migration `*_submit_job_confirms_key`) is one SELECT that PostgreSQL inlines here.
    text: 'SELECT * FROM api_key_principal($1, $2)',
    values: [keyHash, PLATFORM_PARSE_PIPELINE_ID],
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
    asRead: { keyHash, fingerprint: row.fingerprint },
  }
}

/**
 * Principals this process read lately, by key, for requests whose write confirms the key in its own statement (a
 * submission: `submit_jobs` checks the fingerprint): they skip the key's read, one statement of their two. A principal
 * is kept for `maxAgeMs` at most, so a revoked key stops costing a refused upload after that; the confirmation, not
 * the age, is what keeps a revocation or a change effective from the next request on.
 */
export class RecentPrincipals {
  private readonly kept = new Map<string, { principal: Principal; readAt: number }>()

  constructor(private readonly opts: { maxAgeMs: number; maxKeys: number }) {}

  // Kept by the key's hash, as the database keeps keys: no plain key lives on in the process's memory.
  get(key: string, now = Date.now()): Principal | undefined {
    const keyHash = hashKey(key)
    const entry = this.kept.get(keyHash)
    if (!entry) return undefined
    if (now - entry.readAt <= this.opts.maxAgeMs) return entry.principal
    this.kept.delete(keyHash)
    return undefined
  }

  remember(principal: Principal, now = Date.now()): void {
    const { keyHash } = principal.asRead
    this.kept.delete(keyHash)
    // The oldest read goes first (a Map iterates in insertion order).
    if (this.kept.size >= this.opts.maxKeys) this.kept.delete(this.kept.keys().next().value!)
    this.kept.set(keyHash, { principal, readAt: now })
  }

  forget(principal: Principal): void {
    this.kept.delete(principal.asRead.keyHash)
  }
}
