import { createPrisma, type Db } from '@quire/db'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'

// Migration *_partial_indexes: the indexes on events.fanned_out_at and jobs.error_group_id hold only the rows their
// searches look for. A search PostgreSQL cannot prove to imply the index's condition would fall back to reading the
// whole table, so each search is planned here as the code sends it, generic plan included (prepared statements).

let db: Db
beforeAll(() => {
  db = createPrisma(process.env.DATABASE_URL!, { poolMax: 1 })
})
afterAll(async () => db.$disconnect())

/** The plan of a prepared statement run with a generic plan (as after five executions), sequential scans off. */
async function genericPlan(sql: string, params: string, args: string): Promise<string> {
  return db.$transaction(async (tx) => {
    await tx.$executeRawUnsafe('SET LOCAL enable_seqscan = off')
    await tx.$executeRawUnsafe('SET LOCAL plan_cache_mode = force_generic_plan')
    await tx.$executeRawUnsafe(`PREPARE partial_index_probe(${params}) AS ${sql}`)
    try {
      const rows = await tx.$queryRawUnsafe<{ 'QUERY PLAN': string }[]>(
        `EXPLAIN (COSTS OFF) EXECUTE partial_index_probe(${args})`,
      )
      return rows.map((r) => r['QUERY PLAN']).join('\n')
    } finally {
      await tx.$executeRawUnsafe('DEALLOCATE partial_index_probe')
    }
  })
}

describe('partial indexes', () => {
  it('hold only owed events and grouped jobs', async () => {
    const defs = await db.$queryRaw<{ indexname: string; indexdef: string }[]>`
      SELECT indexname, indexdef FROM pg_indexes
      WHERE indexname IN ('events_owed_created_at_idx', 'jobs_error_group_id_idx') ORDER BY indexname`
    expect(defs.map((d) => d.indexdef)).toEqual([
      expect.stringMatching(/ON public\.events USING btree \(created_at\) WHERE \(fanned_out_at IS NULL\)$/),
      expect.stringMatching(/ON public\.jobs USING btree \(error_group_id\) WHERE \(error_group_id IS NOT NULL\)$/),
    ])
  })

  it('serve the search for owed events (requeueStalledWork)', async () => {
    const plan = await genericPlan(
      'SELECT id FROM events WHERE fanned_out_at IS NULL AND created_at < $1 ORDER BY created_at LIMIT 100',
      'timestamp',
      "'2026-01-01'",
    )
    expect(plan).toContain('events_owed_created_at_idx')
  })

  it("serve the searches for an error group's jobs, by one id and by a list of ids (errorGroups counts)", async () => {
    expect(await genericPlan('SELECT id FROM jobs WHERE error_group_id = $1 LIMIT 1', 'text', "'eg_x'")).toContain(
      'jobs_error_group_id_idx',
    )
    const counts = await genericPlan(
      `SELECT error_group_id, count(*) FROM jobs WHERE error_group_id = ANY($1) AND error_group_id IS NOT NULL
       GROUP BY error_group_id`,
      'text[]',
      "ARRAY['eg_x']",
    )
    expect(counts).toContain('jobs_error_group_id_idx')
  })
})
