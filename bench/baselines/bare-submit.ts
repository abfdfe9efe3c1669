// The submit baseline: the least a submission must do, with no framework around it. A bare Koa app parses the
// multipart body to a temporary file (formidable, as Quire does), sniffs the type and counts the pages (the same
// @quire/extraction calls), INSERTs one row, runs one conditional balance UPDATE and adds one BullMQ job
// (bench/lib/bare-submit-app.ts). Env: DATABASE_URL, REDIS_URL, BENCH_PORT, BENCH_UPLOAD_DIR, QUIRE_QUEUE_PREFIX.
import { serveBareSubmit } from '../lib/bare-submit-app.ts'

await serveBareSubmit({
  queueName: 'bench-bare-submit',
  async prepare(pool) {
    await pool.query(`CREATE TABLE IF NOT EXISTS bench_jobs (id text PRIMARY KEY, pages int NOT NULL, created_at timestamptz NOT NULL DEFAULT now());
      CREATE TABLE IF NOT EXISTS bench_balances (id text PRIMARY KEY, available bigint NOT NULL);
      INSERT INTO bench_balances VALUES ('ws', 1000000000000) ON CONFLICT DO NOTHING`)
    return async (pool, job) => {
      await pool.query('INSERT INTO bench_jobs (id, pages) VALUES ($1, $2)', [job.id, job.pages])
      const charged = await pool.query(
        'UPDATE bench_balances SET available = available - $1 WHERE id = $2 AND available >= $1',
        [job.pages, 'ws'],
      )
      return charged.rowCount === 1
    }
  },
})
