// Submits files as Form B jobs and waits until every job of the workspace is final, reading PostgreSQL directly so
// polling costs the API nothing.
import pg from 'pg'
import { multipartBody, sleep } from './kit.ts'

const FINAL = ['completed', 'completed_with_errors', 'failed', 'cancelled', 'timed_out']

export async function runJobs(opts: {
  baseUrl: string
  databaseUrl: string
  key: string
  workspaceId: string
  files: Uint8Array[]
  inFlight?: number
  timeoutMs?: number
}): Promise<{ seconds: number }> {
  const client = new pg.Client({ connectionString: opts.databaseUrl })
  await client.connect()
  try {
    const t0 = performance.now()
    let next = 0
    await Promise.all(
      Array.from({ length: opts.inFlight ?? 4 }, async () => {
        while (next < opts.files.length) {
          const { body, contentType } = multipartBody('files', `doc-${next}.pdf`, opts.files[next++]!)
          const res = await fetch(`${opts.baseUrl}/v1/jobs`, {
            method: 'POST',
            headers: { 'X-API-Key': opts.key, 'Content-Type': contentType },
            body,
          })
          if (res.status !== 202) throw new Error(`submit answered ${res.status}: ${await res.text()}`)
          await res.arrayBuffer()
        }
      }),
    )
    const deadline = Date.now() + (opts.timeoutMs ?? 600_000)
    for (;;) {
      const { rows } = await client.query<{ status: string; n: string }>(
        'SELECT status, count(*) AS n FROM jobs WHERE workspace_id = $1 GROUP BY status',
        [opts.workspaceId],
      )
      const final = rows.filter((r) => FINAL.includes(r.status)).reduce((n, r) => n + Number(r.n), 0)
      if (final >= opts.files.length) {
        const bad = rows.filter((r) => r.status !== 'completed')
        if (bad.length) throw new Error(`jobs not completed: ${JSON.stringify(bad)}`)
        return { seconds: (performance.now() - t0) / 1000 }
      }
      if (Date.now() > deadline) throw new Error(`jobs still running: ${JSON.stringify(rows)}`)
      await sleep(50)
    }
  } finally {
    await client.end()
  }
}
