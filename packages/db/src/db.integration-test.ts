import net from 'node:net'
import { afterAll, describe, expect, it } from 'vitest'
import { startTcpProxy } from '../../../tests/blackbox/tcp-proxy.ts'
import {
  ApiForm,
  createPrisma,
  directQuery,
  directSql,
  directTransaction,
  inTransaction,
  isRetryableTxError,
  Prisma,
  type Db,
} from './index.ts'

const url = process.env.DATABASE_URL
if (!url) throw new Error('DATABASE_URL is not set: run through `npm test`')

describe('@quire/db against the real database', () => {
  const db: Db = createPrisma(url)
  const id = `ws_dbtest_${Date.now().toString(36)}_${Math.random().toString(36).slice(2, 8)}`

  afterAll(async () => {
    await db.workspace.deleteMany({ where: { id: { startsWith: id } } })
    await db.$disconnect()
  })

  it('creates and reads rows through the generated client', async () => {
    await db.workspace.create({ data: { id, name: 'db test', apiForm: ApiForm.A, creditsAvailable: 10 } })
    const ws = await db.workspace.findUniqueOrThrow({ where: { id } })
    expect(ws.apiForm).toBe('A')
    expect(ws.creditsAvailable).toBe(10)
  })

  it('commits an interactive transaction', async () => {
    await inTransaction(db, async (tx) => {
      await tx.workspace.update({
        where: { id },
        data: { creditsAvailable: { decrement: 3 }, creditsReserved: { increment: 3 } },
      })
    })
    const ws = await db.workspace.findUniqueOrThrow({ where: { id } })
    expect([ws.creditsAvailable, ws.creditsReserved]).toEqual([7, 3])
  })

  it('rolls back when the callback throws', async () => {
    await expect(
      inTransaction(db, async (tx) => {
        await tx.workspace.update({ where: { id }, data: { creditsAvailable: 0 } })
        throw new Error('boom')
      }),
    ).rejects.toThrow('boom')
    expect((await db.workspace.findUniqueOrThrow({ where: { id } })).creditsAvailable).toBe(7)
  })

  it('retries serialization failures until the transaction commits', async () => {
    // Two serializable read-modify-write transactions on the same row: PostgreSQL aborts one
    // (40001 -> P2034); inTransaction re-runs it, so both increments land.
    const bump = () =>
      inTransaction(
        db,
        async (tx) => {
          const ws = await tx.workspace.findUniqueOrThrow({ where: { id } })
          await new Promise((r) => setTimeout(r, 50))
          await tx.workspace.update({ where: { id }, data: { creditsSpent: ws.creditsSpent + 1 } })
        },
        { isolationLevel: Prisma.TransactionIsolationLevel.Serializable },
      )
    await Promise.all([bump(), bump(), bump()])
    expect((await db.workspace.findUniqueOrThrow({ where: { id } })).creditsSpent).toBe(3)
  })

  it('gives up after maxAttempts and rethrows the Prisma error', async () => {
    let calls = 0
    const err = await inTransaction(
      db,
      async () => {
        calls++
        throw new Prisma.PrismaClientKnownRequestError('conflict', { code: 'P2034', clientVersion: 'test' })
      },
      { maxAttempts: 3 },
    ).catch((e: unknown) => e)
    expect(isRetryableTxError(err)).toBe(true)
    expect(calls).toBe(3)
  })

  it('honours ?schema= in the URL', async () => {
    const schema = `dbtest_${Math.random().toString(36).slice(2, 8)}`
    await db.$executeRawUnsafe(`CREATE SCHEMA "${schema}"`)
    // Prisma qualifies tables and enum casts with the schema, so the enum must live there too.
    await db.$executeRawUnsafe(`CREATE TYPE "${schema}"."ApiForm" AS ENUM ('A', 'B')`)
    await db.$executeRawUnsafe(`CREATE TABLE "${schema}"."workspaces" (LIKE public."workspaces" INCLUDING ALL)`)
    await db.$executeRawUnsafe(
      `ALTER TABLE "${schema}"."workspaces" ALTER COLUMN "api_form" TYPE "${schema}"."ApiForm" USING "api_form"::text::"${schema}"."ApiForm"`,
    )
    const u = new URL(url)
    u.searchParams.set('schema', schema)
    const scoped = createPrisma(u.toString())
    try {
      await scoped.workspace.create({ data: { id: `${id}_s`, name: 'scoped', apiForm: ApiForm.B } })
      const rows = await db.$queryRawUnsafe<{ n: bigint }[]>(`SELECT count(*) AS n FROM "${schema}"."workspaces"`)
      expect(Number(rows[0]?.n)).toBe(1)
      expect(await db.workspace.count({ where: { id: `${id}_s` } })).toBe(0)
    } finally {
      await scoped.$disconnect()
      await db.$executeRawUnsafe(`DROP SCHEMA "${schema}" CASCADE`)
    }
  })
})

/** The PostgreSQL backend serving the pool's connection: the same pid means the same connection. */
const backendPid = async (db: Db) =>
  (await directQuery<{ pid: number }>(db, { text: 'SELECT pg_backend_pid() AS pid', values: [] }))[0]!.pid

/**
 * Runs `fn` with a one-connection client and a workspace of 5 credits of its own; both are gone afterwards, whatever
 * `fn` did.
 */
async function withWorkspace(name: string, fn: (db: Db, id: string) => Promise<void>): Promise<void> {
  const id = `ws_${name.replace(/\W/g, '')}_${Date.now().toString(36)}_${Math.random().toString(36).slice(2, 8)}`
  const db = createPrisma(url!, { poolMax: 1 })
  try {
    await db.workspace.create({ data: { id, name, apiForm: ApiForm.B, creditsAvailable: 5 } })
    await fn(db, id)
  } finally {
    await db.workspace.deleteMany({ where: { id } })
    await db.$disconnect()
  }
}

describe('the connection pool (packages/db/src/pool.ts)', () => {
  it('a statement PostgreSQL refuses leaves its connection in the pool, through Prisma and through directQuery', async () => {
    const db = createPrisma(url, { poolMax: 1 })
    try {
      const pid = await backendPid(db)
      await expect(db.$executeRaw`SELECT 1 / ${0}::int`).rejects.toThrow()
      await expect(directQuery(db, { text: 'SELECT 1 / $1::int', values: [0] })).rejects.toMatchObject({
        code: '22012',
      })
      await expect(
        directQuery(db, { text: "DO $$ BEGIN RAISE EXCEPTION USING ERRCODE = 'QR402'; END $$", values: [] }),
      ).rejects.toMatchObject({ code: 'QR402' })
      // The same backend answers: no reconnection, and the statement's transaction is over (a new one sees no error).
      expect(await backendPid(db)).toBe(pid)
      expect(await db.$queryRaw`SELECT 2 AS two`).toEqual([{ two: 2 }])
      // A transaction that failed is rolled back and its connection reused too.
      await expect(
        inTransaction(db, async (tx) => {
          await tx.$executeRaw`SELECT 1 / ${0}::int`
        }),
      ).rejects.toThrow()
      expect(await backendPid(db)).toBe(pid)
    } finally {
      await db.$disconnect()
    }
  })

  it("a connection reset mid-query fails that query, marked as PostgreSQL's; no uncaught exception; the next query reconnects", async () => {
    // PostgreSQL reached through the project's TCP proxy, whose cut resets every open socket (a network cut).
    const target = new URL(url)
    const proxy = await startTcpProxy({ host: target.hostname, port: Number(target.port || 5432) })
    const relayed = new URL(url)
    relayed.hostname = '127.0.0.1'
    relayed.port = String(proxy.port)
    const db = createPrisma(relayed.toString(), { poolMax: 1 })
    const uncaught: unknown[] = []
    const onUncaught = (err: unknown) => uncaught.push(err)
    // Vitest's own handler would fail the run on one; this test wants to see whether one happens.
    const vitestHandlers = process.listeners('uncaughtException')
    process.removeAllListeners('uncaughtException')
    process.on('uncaughtException', onUncaught)
    try {
      const pid = await backendPid(db)
      const slow = directQuery(db, { text: 'SELECT pg_sleep(5)', values: [] })
      await new Promise((r) => setTimeout(r, 200))
      await proxy.cut()
      const failure = await slow.then(
        () => null,
        (err: Error) => err,
      )
      expect(failure).toMatchObject({ code: 'ECONNRESET', message: 'read ECONNRESET' })
      // Marked as PostgreSQL's for dependencyDown (@quire/runtime), so a worker waits for the database instead of
      // spending an attempt.
      expect((failure as unknown as Record<symbol, unknown>)[Symbol.for('quire.dependency')]).toBe('postgresql')
      await new Promise((r) => setTimeout(r, 200))
      expect(uncaught).toEqual([])
      await proxy.restore()
      expect(await backendPid(db)).not.toBe(pid)
    } finally {
      process.removeListener('uncaughtException', onUncaught)
      for (const h of vitestHandlers) process.on('uncaughtException', h)
      await db.$disconnect()
      await proxy.close()
    }
  })

  it("a connection reset while it is being made (a server stopping or starting) fails the statement, marked as PostgreSQL's", async () => {
    // A server that accepts and resets at the first byte of the startup handshake, as PostgreSQL can while it stops.
    const server = net.createServer((s) => s.once('data', () => s.resetAndDestroy()))
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    const db = createPrisma(`postgresql://postgres@127.0.0.1:${(server.address() as net.AddressInfo).port}/postgres`, {
      poolMax: 1,
    })
    try {
      for (const run of [
        () => directQuery(db, { text: 'SELECT 1', values: [] }),
        () => directSql(db).$queryRaw`SELECT 1`,
        () => directTransaction(db, (sql) => sql.$queryRaw`SELECT 1`),
      ]) {
        const failure = await run().then(
          () => null,
          (err: Error) => err,
        )
        expect(failure).toMatchObject({ code: 'ECONNRESET' })
        // dependencyDown (@quire/runtime) reads the mark: a worker waits for the database instead of spending an
        // attempt (a fan-out job failed for good on this during the chaos PostgreSQL outage before it was marked).
        expect((failure as unknown as Record<symbol, unknown>)[Symbol.for('quire.dependency')]).toBe('postgresql')
      }
    } finally {
      await db.$disconnect()
      server.close()
    }
  })

  it('a connection that died is dropped: the next query gets a new one', async () => {
    const db = createPrisma(url, { poolMax: 1 })
    const admin = createPrisma(url, { poolMax: 1 })
    try {
      const pid = await backendPid(db)
      await directQuery(admin, { text: 'SELECT pg_terminate_backend($1)', values: [pid] })
      // The first query on the dead connection fails (FATAL, or the socket closed); the pool does not keep it.
      await directQuery(db, { text: 'SELECT 1', values: [] }).catch(() => {})
      const next = await backendPid(db)
      expect(next).not.toBe(pid)
      expect(await db.$queryRaw`SELECT 3 AS three`).toEqual([{ three: 3 }])
    } finally {
      await Promise.all([db.$disconnect(), admin.$disconnect()])
    }
  })
})

describe('directTransaction (packages/db/src/direct-sql.ts)', () => {
  it('commits its raw statements together, with Prisma fragments and Prisma value conventions', async () => {
    await withWorkspace('direct tx', async (db, id) => {
      const at = new Date('2026-03-04T05:06:07.089Z')
      const rows = await directTransaction(db, async (sql) => {
        const sets = [Prisma.sql`credits_available = credits_available - ${2}::int`, Prisma.sql`name = ${'renamed'}`]
        const n = await sql.$executeRaw`UPDATE workspaces SET ${Prisma.join(sets, ', ')} WHERE id = ${id}`
        expect(n).toBe(1)
        // A Date goes in as its UTC instant; `timestamp` comes back as that instant and int8 as a bigint, as Prisma's.
        return sql.$queryRaw<{ at: Date; big: bigint; available: number; name: string }[]>`
          SELECT ${at}::timestamp(3) AS at, 9007199254740993::int8 AS big, credits_available AS available, name
          FROM workspaces WHERE id = ${id}`
      })
      expect(rows).toEqual([{ at, big: 9007199254740993n, available: 3, name: 'renamed' }])
      const ws = await db.workspace.findUniqueOrThrow({ where: { id } })
      expect([ws.creditsAvailable, ws.name]).toEqual([3, 'renamed'])
    })
  })

  it('rolls back everything when the callback throws or PostgreSQL refuses a statement, and keeps the connection', async () => {
    await withWorkspace('direct tx', async (db, id) => {
      const pid = await backendPid(db)
      await expect(
        directTransaction(db, async (sql) => {
          await sql.$executeRaw`UPDATE workspaces SET credits_available = 0 WHERE id = ${id}`
          throw new Error('boom')
        }),
      ).rejects.toThrow('boom')
      await expect(
        directTransaction(db, async (sql) => {
          await sql.$executeRaw`UPDATE workspaces SET credits_available = 0 WHERE id = ${id}`
          await sql.$executeRaw`UPDATE workspaces SET credits_available = -1 WHERE id = ${id}` // a CHECK refuses it
        }),
      ).rejects.toMatchObject({ code: '23514' })
      expect((await db.workspace.findUniqueOrThrow({ where: { id } })).creditsAvailable).toBe(5)
      expect(await backendPid(db)).toBe(pid)
      // The connection is out of any transaction: a statement on it commits on its own.
      await directQuery(db, { text: 'UPDATE workspaces SET credits_available = 4 WHERE id = $1', values: [id] })
      expect((await db.workspace.findUniqueOrThrow({ where: { id } })).creditsAvailable).toBe(4)
    })
  })

  it('a statement left unanswered fails the transaction after its timeout; its connection closes, nothing of it commits', async () => {
    await withWorkspace('direct tx', async (db, id) => {
      const holder = createPrisma(url, { poolMax: 1 })
      try {
        const pid = await backendPid(db)
        // Another session holds the row; the transaction's UPDATE waits for it, unanswered.
        let release!: () => void
        const held = holder.$transaction(async (tx) => {
          await tx.$executeRaw`SELECT 1 FROM workspaces WHERE id = ${id} FOR UPDATE`
          await new Promise<void>((resolve) => (release = resolve))
        })
        await new Promise((r) => setTimeout(r, 200))
        await expect(
          directTransaction(
            db,
            async (sql) => {
              await sql.$executeRaw`UPDATE workspaces SET credits_available = 1 WHERE id = ${id}`
            },
            { statementTimeoutMs: 500 },
          ),
        ).rejects.toThrow('Query read timeout')
        // The connection left the pool; once the lock is free the server reads its close: the UPDATE never commits.
        expect(await backendPid(db)).not.toBe(pid)
        release()
        await held
        await new Promise((r) => setTimeout(r, 200))
        expect((await db.workspace.findUniqueOrThrow({ where: { id } })).creditsAvailable).toBe(5)
        const alive = await directQuery<{ n: number }>(db, {
          text: 'SELECT count(*)::int AS n FROM pg_stat_activity WHERE pid = $1',
          values: [pid],
        })
        expect(alive[0]!.n).toBe(0)
      } finally {
        await holder.$disconnect()
      }
    })
  })
})

describe('directSql (packages/db/src/index.ts)', () => {
  it('runs each raw statement in autocommit on the pool, prepared, with Prisma value conventions', async () => {
    await withWorkspace('direct sql', async (db, id) => {
      const sql = directSql(db)
      const pid = await backendPid(db)
      expect(
        await sql.$executeRaw`UPDATE workspaces SET credits_available = credits_available - ${2}::int WHERE id = ${id}`,
      ).toBe(1)
      // Committed on its own: another client sees it at once.
      const other = createPrisma(url, { poolMax: 1 })
      try {
        expect((await other.workspace.findUniqueOrThrow({ where: { id } })).creditsAvailable).toBe(3)
      } finally {
        await other.$disconnect()
      }
      // A refused statement leaves nothing and keeps the connection.
      await expect(
        sql.$executeRaw`UPDATE workspaces SET credits_available = -1 WHERE id = ${id}`,
      ).rejects.toMatchObject({
        code: '23514',
      })
      expect(await backendPid(db)).toBe(pid)
      const at = new Date('2026-03-04T05:06:07.089Z')
      const rows = await sql.$queryRaw<{ at: Date; big: bigint; available: number }[]>`
        SELECT ${at}::timestamp(3) AS at, 9007199254740993::int8 AS big, credits_available AS available
        FROM workspaces WHERE id = ${id}`
      expect(rows).toEqual([{ at, big: 9007199254740993n, available: 3 }])
      // Prepared on the connection under the statement's digest, as Prisma's statements are.
      const prepared = await directQuery<{ n: number }>(db, {
        text: "SELECT count(*)::int AS n FROM pg_prepared_statements WHERE statement LIKE '%credits_available - $1::int%'",
        values: [],
      })
      expect(prepared[0]!.n).toBe(1)
    })
  })
})
