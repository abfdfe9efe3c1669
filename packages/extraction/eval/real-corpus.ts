import { readdir, readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { normaliseAmount } from '../src/normalise-amount.ts'
import { normaliseDate } from '../src/normalise-date.ts'

/**
 * The real documents of `shared/corpus/` (never copied into this repository): each set is a folder of scans with
 * one ground-truth JSON per scan. They are read where they lie, scored beside the generated corpus, and gate CI.
 */
export type RealEntry = {
  id: string
  set: string
  file: string
  fileType: 'jpeg' | 'png' | 'pdf'
  /** Ground truth as the built-in invoice schema writes it; a field the truth leaves empty is not scored. */
  expected: { date?: string; amount?: number }
}

/** How each known set spells its truth: SROIE writes `{date, total}` as printed, on day-first Malaysian receipts. */
const SETS: Record<string, { dateOrder: 'DMY' | 'MDY' }> = {
  'sroie-dev': { dateOrder: 'DMY' },
}

const FILE_TYPES = { jpg: 'jpeg', jpeg: 'jpeg', png: 'png', pdf: 'pdf' } as const

/** The printed truth, normalised: `(06/12/2016)` → 2016-12-06, `RM 31.20` / `$8.20` → 31.2 / 8.2. */
export function truthOf(raw: { date?: string; total?: string }, dateOrder: 'DMY' | 'MDY'): RealEntry['expected'] {
  const date = raw.date?.trim() ? normaliseDate(raw.date.replace(/[()]/g, '').trim(), { order: dateOrder }) : null
  const total = raw.total?.trim() ? normaliseAmount(raw.total.replace(/^[A-Z]{1,3}\s*|^\$/i, '').trim()) : null
  return { ...(date ? { date } : {}), ...(total !== null ? { amount: total } : {}) }
}

export async function loadRealCorpus(root: string): Promise<{ dir: string; entries: RealEntry[] }[]> {
  const sets: { dir: string; entries: RealEntry[] }[] = []
  for (const [set, { dateOrder }] of Object.entries(SETS)) {
    const dir = join(root, set)
    const names = await readdir(dir).catch(() => null)
    if (!names) continue
    const entries: RealEntry[] = []
    for (const name of names.sort()) {
      const m = /^(.+)\.(jpe?g|png|pdf)$/i.exec(name)
      if (!m) continue
      const id = m[1] as string
      const truth = JSON.parse(await readFile(join(dir, `${id}.json`), 'utf8')) as { date?: string; total?: string }
      const fileType = FILE_TYPES[(m[2] as string).toLowerCase() as keyof typeof FILE_TYPES]
      entries.push({ id: `${set}/${id}`, set, file: name, fileType, expected: truthOf(truth, dateOrder) })
    }
    sets.push({ dir, entries })
  }
  return sets
}
