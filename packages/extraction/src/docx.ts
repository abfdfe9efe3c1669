import mammoth from 'mammoth'
import { inspectDocx } from './docx-limits.ts'
import { ExtractionError } from './errors.ts'
import { readZipEntry } from './read-zip-entry.ts'

/** DESIGN: a DOCX whose rendered page count is unknown counts 1 page per started 3,000 characters. */
export const DOCX_CHARS_PER_PAGE = 3000

/** The page count Word stored in docProps/app.xml (`<Pages>`), or null when absent or unreadable. */
export async function readDocxStoredPageCount(path: string): Promise<number | null> {
  const xml = await readZipEntry(path, 'docProps/app.xml', 1024 * 1024).catch(() => null)
  if (!xml) return null
  const match = /<(?:\w+:)?Pages>\s*(\d+)\s*<\/(?:\w+:)?Pages>/.exec(xml.toString('utf8'))
  if (!match?.[1]) return null
  const pages = Number.parseInt(match[1], 10)
  return Number.isSafeInteger(pages) && pages > 0 ? pages : null
}

/**
 * The document's plain text (mammoth raw text), with blank-line runs collapsed and trimmed. The archive is walked
 * under the file limits first (inspectDocx): mammoth inflates and parses whatever the file holds.
 */
export async function readDocxText(path: string): Promise<string> {
  await inspectDocx(path)
  let raw: string
  try {
    raw = (await mammoth.extractRawText({ path })).value
  } catch (error) {
    throw new ExtractionError('corrupt_file', `DOCX could not be read: ${(error as Error).message}`, { cause: error })
  }
  return raw
    .replace(/\r\n?/g, '\n')
    .replace(/[ \t]+\n/g, '\n')
    .replace(/\n{2,}/g, '\n')
    .trim()
}

/** 1 page per started 3,000 characters, at least 1. */
export function pagesForTextLength(length: number): number {
  return Math.max(1, Math.ceil(length / DOCX_CHARS_PER_PAGE))
}
