import { z } from 'zod'

/** `[x0, y0, x1, y1]` in fractions of the page (0..1), origin at the top left. */
export const Box = z.tuple([z.number(), z.number(), z.number(), z.number()])
export type Box = z.infer<typeof Box>

/** A word and where it sits on its page. */
export const LayoutWord = z.object({
  text: z.string(),
  box: Box,
  /** OCR confidence of the word, 0..1 (absent for a PDF text layer). */
  conf: z.number().min(0).max(1).optional(),
  /** Words sharing a group were read as one run (one pdf.js text item, one OCR line). */
  group: z.number().int().optional(),
})
export type LayoutWord = z.infer<typeof LayoutWord>

/** The words of one page, with the page's 1-based number in its file. */
export const PageLayout = z.object({
  page: z.number().int().min(1),
  words: z.array(LayoutWord),
})
export type PageLayout = z.infer<typeof PageLayout>

const PRECISION = 10_000

/** Clamps a box to the page and rounds it to 4 decimals (enough for 0.1 mm on A4, and short in JSON). */
export function tidyBox(box: readonly number[]): Box {
  const r = (n: number | undefined): number => Math.round(Math.max(0, Math.min(1, n ?? 0)) * PRECISION) / PRECISION
  const [x0, y0, x1, y1] = box
  return [
    r(Math.min(x0 ?? 0, x1 ?? 0)),
    r(Math.min(y0 ?? 0, y1 ?? 0)),
    r(Math.max(x0 ?? 0, x1 ?? 0)),
    r(Math.max(y0 ?? 0, y1 ?? 0)),
  ]
}

/** The smallest box around several boxes. */
export function unionBox(boxes: readonly Box[]): Box | undefined {
  if (boxes.length === 0) return undefined
  let [x0, y0, x1, y1] = boxes[0] as Box
  for (const [a, b, c, d] of boxes) {
    x0 = Math.min(x0, a)
    y0 = Math.min(y0, b)
    x1 = Math.max(x1, c)
    y1 = Math.max(y1, d)
  }
  return [x0, y0, x1, y1]
}

/** Layouts read back from storage: anything malformed is dropped rather than trusted. */
export function parseLayouts(raw: unknown): Array<PageLayout | null> | undefined {
  if (!Array.isArray(raw)) return undefined
  return raw.map((entry) => {
    const parsed = PageLayout.safeParse(entry)
    return parsed.success ? parsed.data : null
  })
}
