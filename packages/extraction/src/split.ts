import { classify, type Classification } from './classify.ts'
import type { DocumentType, SplitMode } from './schema.ts'

export type SplitGroup = {
  /** 1-based page numbers, ascending. */
  pages: number[]
  type: string | null
  schemaId: string | null
  confidence: number
}

/** "Page 1 of 3", "Page 1/3", "1 of 3" at the start of a page: a new document starts here. */
const FIRST_PAGE_MARK = /(?<![\p{L}\p{N}])(?:page|seite|página|pagina)\s*1\s*(?:of|\/|von|de|di)\s*\d+(?![\p{N}])/iu

/**
 * Splits a parsed document into sub-documents.
 * - `none`: one group of every page, classified on the whole text.
 * - `per_page`: one group per page, each classified on its own text.
 * - `by_type`: each page is classified; consecutive pages of the same type form one group; a page
 *   with no type joins the group before it (pages before the first typed page join the first
 *   group); a page marked "Page 1 of N" starts a new group even when the type repeats.
 * No pages → `[]`.
 */
export function splitPages(
  pages: readonly string[],
  mode: SplitMode,
  documentTypes: readonly DocumentType[],
): SplitGroup[] {
  if (pages.length === 0) return []
  const numbers = pages.map((_, i) => i + 1)
  if (mode === 'none') return [group(numbers, classify(pages.join('\n\n'), documentTypes))]
  const perPage = pages.map((text) => classify(text, documentTypes))
  if (mode === 'per_page') return perPage.map((c, i) => group([i + 1], c))

  const groups: Array<{ pages: number[]; classification: Classification | null }> = []
  perPage.forEach((c, i) => {
    const current = groups[groups.length - 1]
    const startsNew = Boolean(current?.classification) && FIRST_PAGE_MARK.test((pages[i] ?? '').slice(0, 2000))
    if (!current) {
      groups.push({ pages: [i + 1], classification: c.type ? c : null })
    } else if (!c.type && !startsNew) {
      current.pages.push(i + 1)
    } else if (!current.classification && c.type && !startsNew) {
      current.pages.push(i + 1)
      current.classification = c
    } else if (current.classification?.type === c.type && !startsNew) {
      current.pages.push(i + 1)
      if (c.confidence > current.classification.confidence) current.classification = c
    } else {
      groups.push({ pages: [i + 1], classification: c.type ? c : null })
    }
  })
  return groups.map((g) => group(g.pages, g.classification ?? { type: null, schemaId: null, confidence: 0 }))
}

function group(pages: number[], c: Classification): SplitGroup {
  return { pages, type: c.type, schemaId: c.schemaId, confidence: c.confidence }
}
