// Decompression bombs through the real intake and pipeline: a DOCX that inflates to 400 MB and a 30000 × 30000 PNG,
// each submitted to both forms. Each is refused at intake (4xx) or accepted and failed with a code naming the cause;
// never a 5xx, never a process exit, memory bounded (what a file may cost is bounded while it is read).
import { checkInvariants } from './lib/invariants.ts'
import { docxBomb, pngBomb } from '../tests/fixtures/bombs.ts'
import { QUICK, scenario } from './lib/report.ts'
import { startChaosStack } from './lib/stack.ts'
import { newWorkspace, waitAllFinal } from './lib/workload.ts'

await scenario('bombs: 400 MB DOCX, 30000×30000 PNG', async (ctx) => {
  const stack = await startChaosStack('bombs')
  ctx.stacks.push(stack)
  const bombs = [
    { name: 'docx-400mb.docx', bytes: await docxBomb(400) },
    { name: 'png-30000.png', bytes: await pngBomb(30_000) },
  ]
  const outcomes: string[] = []
  const jobs: string[] = []
  for (const form of ['A', 'B'] as const) {
    const ws = await newWorkspace(stack.baseUrl, form)
    for (const bomb of bombs) {
      const f = new FormData()
      if (form === 'A') f.append('pipeline_id', 'parse')
      f.append(form === 'A' ? 'file' : 'files', new Blob([bomb.bytes as Uint8Array<ArrayBuffer>]), bomb.name)
      const t0 = performance.now()
      const res = await fetch(`${stack.baseUrl}/v1/jobs`, { method: 'POST', headers: { 'X-API-Key': ws.key }, body: f })
      const text = await res.text()
      const seconds = ((performance.now() - t0) / 1000).toFixed(1)
      ctx.check(
        `${form} ${bomb.name}: intake answers < 500`,
        res.status < 500,
        `${res.status} in ${seconds} s ${text.slice(0, 200)}`,
      )
      let jobId: string | undefined
      if (res.status === 202) {
        const body = JSON.parse(text)
        jobId = form === 'A' ? body.id : body[0]?.job_id
        if (jobId) jobs.push(jobId)
      }
      outcomes.push(
        `${form} ${bomb.name} (${Math.round(bomb.bytes.length / 1024)} kB): ${res.status}${jobId ? ` ${jobId}` : ''}`,
      )
    }
  }
  const finalWithinMs = QUICK ? 120_000 : 300_000
  await waitAllFinal(stack, finalWithinMs)
  const rows = await stack.query<{
    id: string
    status: string
    error_code: string | null
    error_message: string | null
  }>('SELECT id, status::text AS status, error_code, error_message FROM jobs WHERE id = ANY($1)', [jobs])
  const reserved = await stack.query<{ id: string; page_count: number; credits_reserved: number }>(
    'SELECT id, page_count, credits_reserved FROM jobs WHERE id = ANY($1) AND credits_reserved > 100',
    [jobs],
  )
  ctx.check(
    'a bomb reserves credits for the pages it has, not for what it inflates to',
    reserved.length === 0,
    reserved.length
      ? reserved.map((r) => `${r.id}: ${r.page_count} pages, ${r.credits_reserved} credits reserved`).join('; ')
      : undefined,
  )
  for (const r of rows) {
    outcomes.push(`${r.id} → ${r.status} ${r.error_code ?? ''}`)
    ctx.check(
      `job of a bomb fails with a code naming the cause (${r.id})`,
      r.status === 'failed' && !!r.error_code,
      `${r.status} ${r.error_code} ${r.error_message?.slice(0, 160)}`,
    )
  }
  ctx.detail.push(outcomes.join('; '))
  await checkInvariants(ctx, stack, { finalWithinMs: 1000, singleInputRss: true })
})
