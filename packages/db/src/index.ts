import { createHash } from 'node:crypto'
import { PrismaPg } from '@prisma/adapter-pg'
import type pg from 'pg'
import { Prisma, PrismaClient } from './generated/prisma/client.ts'
import { DEFAULT_STATEMENT_TIMEOUT_MS, type RawSql, rawSqlOn, transactionOn } from './direct-sql.ts'
import { Pool } from './pool.ts'

/** Options for {@link createPrisma}. */
export type CreatePrismaOptions = {
  /** Maximum connections in the pg pool (pg's default is 10). */
  poolMax?: number
  /** Prisma log levels, e.g. `['warn', 'error']`. */
  log?: Prisma.LogLevel[]
}

/**
 * Splits Prisma's `?schema=` parameter off a PostgreSQL URL. pg ignores it; Prisma uses it as the
 * schema its queries target. We pass it to the adapter and also set `search_path` so raw SQL agrees.
 */
export function parseDatabaseUrl(url: string): { connectionString: string; schema: string | undefined } {
  const u = new URL(url)
  const schema = u.searchParams.get('schema') ?? undefined
  u.searchParams.delete('schema')
  return { connectionString: u.toString(), schema }
}

/** Creates a PrismaClient backed by @prisma/adapter-pg (no engine binary). Call `$disconnect()` when done. */
export function createPrisma(url: string, opts: CreatePrismaOptions = {}) {
  const { connectionString, schema } = parseDatabaseUrl(url)
  const pool = new Pool({
    connectionString,
    ...(opts.poolMax ? { max: opts.poolMax } : {}),
    ...(schema ? { options: `-c search_path="${schema.replace(/"/g, '""')}"` } : {}),
  })
  // A pooled connection that dies while idle is dropped and replaced on the next query; without a listener its
  // 'error' event would end the process (the adapter adds its own only once Prisma first connects).
  pool.on('error', () => {})
  const adapter = new PrismaPg(pool, {
    ...(schema ? { schema } : {}),
    disposeExternalPool: true,
    // Typed as always naming; the adapter passes the name to pg as is, and no name (past the cap) means unnamed.
    statementNameGenerator: preparedStatementName as (query: { sql: string }) => string,
  })
  const client = new PrismaClient({ adapter, ...(opts.log ? { log: opts.log } : {}) })
  pools.set(client, pool)
  return client
}

const pools = new WeakMap<object, Pool>()

/** Most distinct statements a process prepares; the SQL Prisma generates is a bounded set, this is a safety cap. */
const PREPARED_STATEMENTS_KEPT = 1000
const preparedNames = new Map<string, string>()

/**
 * Prisma's statements run as named prepared statements: PostgreSQL parses and plans each distinct statement once per
 * connection instead of on every call (a Prisma query with relations: about 0.7 → 0.4 ms on this project's bench
 * machine). The name is a digest of the SQL, so the same statement gets the same name in every connection. Past the
 * cap (statements whose text varies without end, e.g. long IN lists), statements run unnamed as before.
 */
function preparedStatementName(query: { sql: string }): string | undefined {
  let name = preparedNames.get(query.sql)
  if (name === undefined && preparedNames.size < PREPARED_STATEMENTS_KEPT) {
    name = `q_${createHash('sha1').update(query.sql).digest('hex').slice(0, 24)}`
    preparedNames.set(query.sql, name)
  }
  return name
}

/**
 * One SQL statement in autocommit on the client's own connection pool, without Prisma in between: for the few hot
 * paths that are one statement (a submission is one call of a PL/pgSQL function). Prisma's layer costs several
 * times the driver's CPU per statement. Parameters are `$1`-style; `name` makes it a prepared statement per
 * connection (parsed and planned once).
 */
export async function directQuery<Row extends Record<string, unknown>>(
  db: Db,
  query: { text: string; values: unknown[]; name?: string },
): Promise<Row[]> {
  const result: pg.QueryResult<Row> = await poolOf(db).query(query)
  return result.rows
}

/**
 * Raw statements (`sql.$queryRaw`, `sql.$executeRaw`, with Prisma's tagged templates and fragments) each in autocommit
 * on the client's own connection pool, sent without Prisma in between and prepared per connection as Prisma's are:
 * for code written against {@link RawSql} whose call is one statement on a hot path (a credit reservation). Prisma's
 * `$queryRaw` costs about twice the driver's CPU per statement.
 */
export function directSql(db: Db, opts: { statementTimeoutMs?: number } = {}): RawSql {
  return rawSqlOn(
    poolOf(db),
    (text) => preparedStatementName({ sql: text }),
    opts.statementTimeoutMs ?? DEFAULT_STATEMENT_TIMEOUT_MS,
  )
}

/**
 * One transaction on the client's own connection pool, its raw statements (`sql.$queryRaw`, `sql.$executeRaw`, with
 * Prisma's tagged templates and fragments) sent without Prisma in between and prepared per connection as Prisma's
 * are: for a hot path whose transaction is a handful of raw statements (a stage's checkpoint).
 */
export function directTransaction<T>(
  db: Db,
  fn: (sql: RawSql) => Promise<T>,
  opts: { statementTimeoutMs?: number } = {},
): Promise<T> {
  return transactionOn(poolOf(db), fn, (text) => preparedStatementName({ sql: text }), opts.statementTimeoutMs)
}

function poolOf(db: Db): Pool {
  const pool = pools.get(db)
  if (!pool) throw new Error('direct statements need a client made by createPrisma')
  return pool
}

export type Db = ReturnType<typeof createPrisma>

/** The client handed to an interactive transaction callback. */
export type Tx = Prisma.TransactionClient

/** Options for {@link inTransaction}. */
export type InTransactionOptions = {
  isolationLevel?: Prisma.TransactionIsolationLevel
  /** Max time to wait for a connection from the pool (ms). Prisma's default is 2000. */
  maxWait?: number
  /** Max time the transaction may run (ms). Prisma's default is 5000. */
  timeout?: number
  /** Attempts in total, including the first (default 5). */
  maxAttempts?: number
}

/**
 * Prisma error codes worth retrying as a whole transaction:
 * P2034 write conflict / deadlock / serialization failure, P2028 transaction API error
 * (e.g. the transaction expired or could not be started), P2024 pool timeout.
 */
export const RETRYABLE_TX_CODES: ReadonlySet<string> = new Set(['P2034', 'P2028', 'P2024'])

export function isRetryableTxError(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code
  return typeof code === 'string' && RETRYABLE_TX_CODES.has(code)
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms))

/**
 * Runs `fn` in an interactive transaction and re-runs the whole transaction on a retryable
 * error ({@link RETRYABLE_TX_CODES}), with a small jittered exponential backoff. `fn` must
 * therefore be safe to run again: do side effects outside the database only after commit.
 */
export async function inTransaction<T>(
  db: Db,
  fn: (tx: Tx) => Promise<T>,
  opts: InTransactionOptions = {},
): Promise<T> {
  const { maxAttempts = 5, ...txOpts } = opts
  const options = Object.fromEntries(Object.entries(txOpts).filter(([, v]) => v !== undefined))
  for (let attempt = 1; ; attempt++) {
    try {
      return await db.$transaction(fn, options)
    } catch (err) {
      if (attempt >= maxAttempts || !isRetryableTxError(err)) throw err
      const base = 10 * 2 ** (attempt - 1) // 10, 20, 40, 80 ms
      await sleep(base / 2 + Math.random() * base)
    }
  }
}

export { Prisma, PrismaClient }
export {
  ApiForm,
  DeliveryStatus,
  HoldStatus,
  JobStatus,
  StageRunStatus,
  WebhookStatus,
} from './generated/prisma/client.ts'
export type {
  ApiKey,
  CreditHold,
  DeliveryAttempt,
  Document,
  DocumentEvent,
  Event,
  Job,
  JobFile,
  LedgerEntry,
  Notification,
  OutboxMessage,
  Pipeline,
  PipelineVersion,
  StageRun,
  Webhook,
  WebhookDelivery,
  Workspace,
} from './generated/prisma/client.ts'
export type { RawSql } from './direct-sql.ts'
export { GroupCommit } from './group-commit.ts'
export type { GroupWriter } from './group-commit.ts'
export { KEYSET_ORDER, KEYSET_ORDER_ASC, keysetAfter, keysetPage, keysetPosition } from './keyset.ts'
export type { KeysetDirection, KeysetRow } from './keyset.ts'
export { applyMigrations, readMigrations } from './migrate/apply-migrations.ts'
export type { ApplyMigrationsOptions, ApplyMigrationsResult, Migration } from './migrate/apply-migrations.ts'
