import { type Db, directQuery } from '@quire/db'
import type { BlobStore } from '@quire/storage'
import { jobIdOfBlobKey } from './create-job.ts'

/**
 * Deletes stored files no live job owns: a submission stores its files before its statement commits, so an API
 * killed in between (or a refused submission whose clean-up was cut short) leaves files of a job that never existed;
 * retention deletes a job's files after it commits, so a crash there leaves files of an expired job. A file is
 * deleted when its key names a job that is missing or expired and it is older than `minAgeMs`, which keeps the
 * files of submissions still between storing and committing (milliseconds; the default hour is a wide margin).
 * Keys Quire did not make are left alone. Several workers may sweep at once: deleting twice is harmless.
 */
export async function sweepUnownedBlobs(opts: {
  db: Db
  blobs: BlobStore
  minAgeMs: number
  now?: Date
  batch?: number
}): Promise<{ listed: number; deleted: number }> {
  const cutoff = (opts.now ?? new Date()).getTime() - opts.minAgeMs
  const batchSize = opts.batch ?? 500
  let listed = 0
  let deleted = 0
  let batch: { key: string; jobId: string }[] = []
  const settle = async () => {
    const ids = [...new Set(batch.map((b) => b.jobId))]
    const live = new Set(
      (
        await directQuery<{ id: string }>(opts.db, {
          name: 'sweep_unowned_blobs_live_jobs',
          text: 'SELECT id FROM jobs WHERE id = ANY($1::text[]) AND expired_at IS NULL',
          values: [ids],
        })
      ).map((r) => r.id),
    )
    for (const b of batch) {
      if (live.has(b.jobId)) continue
      await opts.blobs.delete(b.key)
      deleted++
    }
    batch = []
  }
  for await (const blob of opts.blobs.list()) {
    listed++
    if (blob.modifiedAt.getTime() >= cutoff) continue
    const jobId = jobIdOfBlobKey(blob.key)
    if (!jobId) continue
    batch.push({ key: blob.key, jobId })
    if (batch.length >= batchSize) await settle()
  }
  if (batch.length) await settle()
  return { listed, deleted }
}
