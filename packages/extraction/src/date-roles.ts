import type { FoundDate } from './normalise-date.ts'

/**
 * Words that make a date something other than the invoice's own: delivery, service period, order, print or creation,
 * due and validity dates. Data per language, matched as whole words or (German compounds) as word starts.
 */
const OTHER_DATE_WORDS: Record<string, readonly string[]> = {
  en: [
    'delivery',
    'delivered',
    'shipped',
    'shipping',
    'ship',
    'dispatch',
    'dispatched',
    'order',
    'ordered',
    'printed',
    'print',
    'created',
    'generated',
    'period',
    'service',
    'due',
    'valid',
    'expiry',
    'expires',
    'until',
    'to',
  ],
  de: [
    'liefer*',
    'leistung*',
    'zeitraum',
    'druck*',
    'gedruckt',
    'erstellt*',
    'bestell*',
    'auftrag*',
    'fällig*',
    'zahlbar',
    'zahlungsziel',
    'bis',
    'gültig*',
  ],
  fr: [
    'livraison',
    'livré',
    'commande',
    'impression',
    'imprimé',
    'créé',
    'période',
    'échéance',
    'au',
    'jusqu*',
    'valable',
  ],
  nl: ['levering', 'lever*', 'bestel*', 'afgedrukt', 'aangemaakt', 'periode', 'verval*', 'tot', 'geldig'],
  es: [
    'entrega',
    'envío',
    'pedido',
    'impresión',
    'impreso',
    'creado',
    'periodo',
    'período',
    'vencimiento',
    'hasta',
    'válido',
  ],
  it: ['consegna', 'spedizione', 'ordine', 'stampa', 'stampato', 'creato', 'periodo', 'scadenza', 'fino', 'valido'],
}

const OTHER_DATE = new RegExp(
  `(?<![\\p{L}])(?:${Object.values(OTHER_DATE_WORDS)
    .flat()
    .map((w) => (w.endsWith('*') ? `${escape(w.slice(0, -1))}\\p{L}*` : escape(w)))
    .join('|')})(?![\\p{L}])`,
  'giu',
)
/** An other-date word names the date when it is this close before it ("Delivery date: ", not "Order Time 18:07 Date"). */
const OTHER_REACH = 16

function escape(word: string): string {
  return word.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
}

/**
 * Whether a date is labelled as something other than the invoice date: one of those words between the start of its
 * line (or the date before it on the line) and the date, or, for a date alone at the start of its line, on a short
 * label line right above it.
 */
export function isOtherDate(text: string, date: FoundDate, all: readonly FoundDate[]): boolean {
  const lineStart = text.lastIndexOf('\n', date.index - 1) + 1
  const before = all.filter((d) => d.index >= lineStart && d.index + d.length <= date.index).at(-1)
  const from = before ? before.index + before.length : lineStart
  const segment = text.slice(from, date.index)
  const last = [...segment.matchAll(OTHER_DATE)].at(-1)
  if (last && segment.length - (last.index + last[0].length) <= OTHER_REACH) return true
  if (text.slice(lineStart, date.index).trim()) return false
  const aboveStart = text.lastIndexOf('\n', lineStart - 2) + 1
  const above = text.slice(aboveStart, Math.max(aboveStart, lineStart - 1))
  return above.trim().length > 0 && above.trim().length <= LABEL_LINE && [...above.matchAll(OTHER_DATE)].length > 0
}

/** A line this short above a date is its label. */
const LABEL_LINE = 30
