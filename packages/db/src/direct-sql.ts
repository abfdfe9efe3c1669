import pg from 'pg'
import { Prisma } from './generated/prisma/client.ts'
import { ignoreClientError, markPostgresqlSocketError, type Pool } from './pool.ts'

/**
 * What raw SQL needs of a client: Prisma's client or one of its transactions, or a connection of
 * {@link directTransaction}. Code written against it runs the same on all of them.
 */
export type RawSql = Pick<Prisma.TransactionClient, '$queryRaw' | '$executeRaw'>

/** How long one statement of a {@link transactionOn} may go unanswered before the transaction is given up. */
export const DEFAULT_STATEMENT_TIMEOUT_MS = 30_000

/**
 * Runs `fn` in one transaction on a connection of `pool`, its statements sent by node-postgres without Prisma in
 * between: Prisma's interactive transaction and its layer cost several times the driver's CPU per statement, and a
 * stage's checkpoint is a handful of raw statements. Rolls back when `fn` throws; a connection whose ROLLBACK fails
 * is broken and leaves the pool. A statement unanswered after `statementTimeoutMs` (a lock never released, a
 * server or network that stopped answering) fails the transaction, as Prisma's transaction timeout did, and its
 * connection leaves the pool, closed: the server rolls the transaction back when it reads the close (a statement
 * waiting for a lock reads it once the wait ends), so nothing of it commits.
 */
export async function transactionOn<T>(
  pool: Pool,
  fn: (sql: RawSql) => Promise<T>,
  nameOf: (text: string) => string | undefined,
  statementTimeoutMs = DEFAULT_STATEMENT_TIMEOUT_MS,
): Promise<T> {
  // Pool#connect marks a connection that fails while it is being made as PostgreSQL's.
  const client = await pool.connect()
  // As for a pooled query (pool.ts): a connection breaking mid-statement also emits 'error' on the client.
  client.on('error', ignoreClientError)
  let broken: Error | undefined
  try {
    await client.query(timed({ text: 'BEGIN' }, statementTimeoutMs))
    const value = await fn(rawSqlOn(client, nameOf, statementTimeoutMs))
    await client.query(timed({ text: 'COMMIT' }, statementTimeoutMs))
    return value
  } catch (err) {
    markPostgresqlSocketError(err)
    if ((err as Error)?.message === PG_QUERY_TIMEOUT) {
      // The statement is still under way on the connection: a ROLLBACK would wait behind it.
      broken = err as Error
    } else {
      await client.query(timed({ text: 'ROLLBACK' }, statementTimeoutMs)).catch((rollbackFailed: Error) => {
        broken = rollbackFailed
      })
    }
    throw err
  } finally {
    client.removeListener('error', ignoreClientError)
    client.release(broken)
  }
}

/** A statement node-postgres fails after `ms` without an answer (`query_timeout`, missing from pg's types). */
function timed(query: pg.QueryConfig, ms: number): pg.QueryConfig {
  return Object.assign(query, { query_timeout: ms })
}

/** node-postgres's error for a statement unanswered within its `query_timeout`. */
const PG_QUERY_TIMEOUT = 'Query read timeout'

/**
 * `$queryRaw` and `$executeRaw` over one node-postgres connection (or a pool: each statement then in autocommit on
 * whichever connection is free), with Prisma's tagged templates and fragments
 * (`Prisma.sql`, `Prisma.join`) and Prisma's value conventions: a Date goes out as its UTC instant (a `timestamp`
 * column holds UTC wall-clock values, as Prisma writes them), `timestamp` comes back as that UTC instant and `int8`
 * as a bigint, whatever the process's time zone.
 */
export function rawSqlOn(
  client: pg.ClientBase | pg.Pool,
  nameOf: (text: string) => string | undefined,
  statementTimeoutMs: number,
): RawSql {
  const run = (query: TemplateStringsArray | Prisma.Sql, values: unknown[]) => {
    const sql = query instanceof Prisma.Sql ? query : Prisma.sql(query, ...values)
    const name = nameOf(sql.text)
    return client.query(
      timed(
        { text: sql.text, values: sql.values.map(toParameter), types: PRISMA_TYPES, ...(name ? { name } : {}) },
        statementTimeoutMs,
      ),
    )
  }
  const $queryRaw = (query: TemplateStringsArray | Prisma.Sql, ...values: unknown[]) =>
    run(query, values).then((r) => r.rows)
  const $executeRaw = (query: TemplateStringsArray | Prisma.Sql, ...values: unknown[]) =>
    run(query, values).then((r) => r.rowCount ?? 0)
  // Prisma's types promise a PrismaPromise (a Promise it can also batch); a plain Promise is all callers await.
  return { $queryRaw, $executeRaw } as unknown as RawSql
}

function toParameter(value: unknown): unknown {
  if (value instanceof Date) return value.toISOString()
  if (typeof value === 'bigint') return value.toString()
  return value
}

const TIMESTAMP_OID = 1114
const INT8_OID = 20

const PRISMA_TYPES = {
  getTypeParser(oid: number, format?: string): (value: string) => unknown {
    if (oid === TIMESTAMP_OID) return (v) => new Date(`${v.replace(' ', 'T')}Z`)
    if (oid === INT8_OID) return (v) => BigInt(v)
    return pg.types.getTypeParser(oid, format as 'text')
  },
} as pg.CustomTypesConfig
