import { parseNumber } from './normalise-amount.ts'

/**
 * What a misread amount could have been. OCR of faded print confuses a few glyph pairs (5/6, 0/8, 1/7, 3/8, 6/8),
 * reads digits as look-alike letters (S for 5, O for 0, l for 1, B for 8, E for 3) and loses or invents a decimal
 * point (1378 for 13.78, 633595 for 63.35 followed by noise). These are guesses: the caller accepts one only when an
 * arithmetic check confirms it.
 */

const LETTER_DIGITS: Record<string, string> = {
  O: '0',
  o: '0',
  D: '0',
  Q: '0',
  U: '0',
  l: '1',
  I: '1',
  i: '1',
  '|': '1',
  '!': '1',
  Z: '2',
  z: '2',
  E: '3',
  A: '4',
  S: '5',
  s: '5',
  G: '6',
  b: '6',
  T: '7',
  B: '8',
  g: '9',
}
const CONFUSED_DIGITS: Record<string, string[]> = {
  '0': ['8', '6'],
  '1': ['7'],
  '3': ['8'],
  '5': ['6'],
  '6': ['5', '8', '0'],
  '7': ['1'],
  '8': ['0', '3', '6'],
}
/** Tokens of a line that hold a digit and may be a misread amount. */
const TOKEN = /[.,]?[0-9A-Za-z|!]*\d[0-9A-Za-z|!]*(?:[.,][0-9A-Za-z|!]+)?/g
const MAX_TOKEN = 12

export type Variant = { value: number; index: number; length: number }

/** Every amount the tokens of `written` could be (with where each token is), including what they read as. */
export function ocrVariants(written: string): Variant[] {
  const all: Variant[] = []
  for (const m of written.matchAll(TOKEN)) {
    const out = new Set<number>()
    const token = m[0]
    if (token.length > MAX_TOKEN) continue
    const mapped = [...token]
      .map((ch) => LETTER_DIGITS[ch] ?? ch)
      .join('')
      .replace(/^[.,]/, '0.')
    if (!/^[\d.,]+$/.test(mapped)) continue
    for (const form of decimalForms(mapped)) {
      add(out, form)
      for (let i = 0; i < form.length; i++)
        for (const swap of CONFUSED_DIGITS[form[i] as string] ?? [])
          add(out, form.slice(0, i) + swap + form.slice(i + 1))
    }
    for (const value of out) all.push({ value, index: m.index, length: token.length })
  }
  return all
}

/** The number as written, with a decimal point before its last two digits when it has none, and its prefixes so. */
function decimalForms(digits: string): string[] {
  if (/[.,]\d{2}$/.test(digits)) return [digits]
  const bare = digits.replace(/[.,]/g, '')
  const forms = [digits]
  for (let end = bare.length; end >= 2; end--) forms.push(`${bare.slice(0, end - 2)}.${bare.slice(end - 2, end)}`)
  return forms
}

function add(out: Set<number>, written: string): void {
  const value = parseNumber(written)
  if (value !== null && value > 0) out.add(Math.round(value * 100) / 100)
}

/** Whether `read` could be `meant` misread: the same length, one character apart, and that pair one OCR confuses. */
export function oneDigitMisread(read: string, meant: string): boolean {
  if (read.length !== meant.length) return false
  const apart = [...read].flatMap((ch, i) => (ch === meant[i] ? [] : [i]))
  if (apart.length !== 1) return false
  const at = apart[0] as number
  return (CONFUSED_DIGITS[meant[at] as string] ?? []).includes(read[at] as string)
}
