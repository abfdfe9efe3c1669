import type { HttpsReceiver } from '@quire/testing'
import { pollUntil } from './client.ts'

/**
 * Waits until the `job.completed` of every job in `jobIds` has reached the receiver, and answers the delivery ids
 * each arrived under (a job delivered twice under two ids shows as two). On timeout it throws, naming the jobs whose
 * completion never arrived, with `explain`'s account of them when given.
 */
export async function completedDeliveries(
  receiver: HttpsReceiver,
  jobIds: readonly string[],
  timeoutMs: number,
  explain?: (missing: string[]) => Promise<string>,
): Promise<Map<string, Set<string>>> {
  const deliveries = new Map<string, Set<string>>()
  const read = () => {
    deliveries.clear()
    for (const r of receiver.received) {
      const body = JSON.parse(r.rawBody.toString())
      if (body.event !== 'job.completed' || !jobIds.includes(body.data.job_id)) continue
      deliveries.set(body.data.job_id, (deliveries.get(body.data.job_id) ?? new Set()).add(body.delivery_id))
    }
    return deliveries.size
  }
  await pollUntil(
    async () => read(),
    (n) => n === jobIds.length,
    timeoutMs,
  ).catch(async (err) => {
    const missing = jobIds.filter((id) => !deliveries.has(id))
    const why = explain ? `\n${await explain(missing)}` : ''
    throw new Error(`${(err as Error).message}; no job.completed for ${missing.join(', ')}${why}`)
  })
  return deliveries
}
