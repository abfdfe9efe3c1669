import type { Db } from '@quire/db'
import type { OutboxRow } from '@quire/queues'
import type { PageRenderer, Principal } from '@quire/core'
import type { SecretBox } from '@quire/secrets'
import type { BlobStore } from '@quire/storage'
import type { ParameterizedContext } from 'koa'
import type { Logger } from 'pino'
import type { ApiConfig } from '../config.ts'

export type AppDeps = {
  db: Db
  blobs: BlobStore
  /** Renders document page images in a child process (GET /v1/documents/{id}/pages/{n}). */
  pages: PageRenderer
  /** Seals webhook secrets and receiver credentials at rest. */
  secrets: SecretBox
  config: ApiConfig
  log: Logger
  /** Runs the outbox relay at once after a commit, so work reaches the queues without waiting for the poll. */
  kickRelay: () => void
  /** Sends outbox rows this process just committed for direct dispatch (a submission's first stage) to BullMQ. */
  dispatchOutbox: (rows: readonly OutboxRow[]) => void
  /** Round trip to Redis, for readiness. */
  pingRedis: () => Promise<unknown>
  /** True while the API's Redis connection is lost (no round trip): requests are answered 503 meanwhile. */
  redisDown: () => boolean
}

export type AppState = { principal: Principal }
export type Ctx = ParameterizedContext<AppState> & { params: Record<string, string> }

export const baseUrl = (ctx: Ctx, deps: AppDeps): string => deps.config.publicUrl ?? `${ctx.protocol}://${ctx.host}`
