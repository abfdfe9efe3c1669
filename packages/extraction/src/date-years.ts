import type { Candidate } from './field-candidates.ts'
import type { FoundDate } from './normalise-date.ts'
import { oneDigitMisread } from './ocr-confusions.ts'

/** Years apart from the span the document's other dates agree on (at most a year wide) that make a date doubtful. */
const FAR_YEARS = 2
/** An invoice date this many days or more after today cannot be right. */
const FUTURE_DAYS = 366
/** What a doubted date keeps at most: below any review threshold worth setting. */
const DOUBTED = 0.45
/** A year one confusable digit from the year two or more other dates agree on is taken as that year, this sure at most. */
const YEAR_MISREAD = 0.6

const yearOf = (value: string): number => Number(value.slice(0, 4))

/**
 * A check of the chosen date's year against the rest of the document: faded print turns 2018 into 2016 or 2013, and
 * every other date the document prints (due, delivery, period, a second print of the sale date) says otherwise. A
 * year one confusable digit from the year two or more others agree on becomes that year; any other far year (one
 * other date cannot tell which of the two is misread), or a date more than a year after today, keeps little
 * confidence.
 */
export function checkDateYear(
  date: Candidate | undefined,
  allDates: readonly FoundDate[],
  now: Date = new Date(),
): Candidate | undefined {
  if (!date || typeof date.value !== 'string') return date
  const year = yearOf(date.value)
  const others = allDates.filter((d) => d.value !== date.value).map((d) => yearOf(d.value))
  const min = Math.min(...others)
  const max = Math.max(...others)
  if (others.length > 0 && max - min <= 1 && (year <= min - FAR_YEARS || year >= max + FAR_YEARS)) {
    if (others.length >= 2 && min === max && oneDigitMisread(String(year), String(min)))
      return { ...date, value: `${min}${date.value.slice(4)}`, confidence: Math.min(date.confidence, YEAR_MISREAD) }
    return { ...date, confidence: Math.min(date.confidence, DOUBTED) }
  }
  const days = (Date.parse(`${date.value}T00:00:00Z`) - now.getTime()) / 86_400_000
  if (days >= FUTURE_DAYS) return { ...date, confidence: Math.min(date.confidence, DOUBTED) }
  return date
}
