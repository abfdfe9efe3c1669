/** The languages Quire reads in their own conventions (pipeline `languages`, DESIGN "Extraction"). */
export const DOCUMENT_LANGUAGES = ['en', 'de', 'fr', 'nl', 'es', 'it'] as const
export type DocumentLanguage = (typeof DOCUMENT_LANGUAGES)[number]

/** ISO 639-3, as tesseract names its models. */
export const ISO_639_3: Record<DocumentLanguage, string> = {
  en: 'eng',
  de: 'deu',
  fr: 'fra',
  nl: 'nld',
  es: 'spa',
  it: 'ita',
}

/**
 * Words invoices and till slips print in each language: labels, table heads, payment words and the commonest
 * function words. A word listed for two languages ("total", "de", "data") tells nothing and is dropped below.
 * Trigram detectors (franc) were tried first and got 58 of 107 generated documents right: a page of labels, names
 * and figures is not the prose they are built for.
 */
// biome-ignore format: the word lists read better packed
const LANGUAGE_WORDS: Record<DocumentLanguage, readonly string[]> = {
  en: [
    'invoice', 'total', 'date', 'due', 'amount', 'tax', 'subtotal', 'qty', 'quantity', 'description', 'price',
    'thank', 'you', 'payment', 'bill', 'to', 'from', 'the', 'and', 'of', 'for', 'cash', 'change', 'receipt',
    'balance', 'number', 'unit', 'item', 'items', 'please', 'terms', 'paid', 'customer', 'account', 'sales', 'order',
    'with', 'your', 'thanks', 'visit', 'again', 'card', 'rounding', 'tendered', 'net', 'days',
  ],
  de: [
    'rechnung', 'rechnungsnummer', 'rechnungsdatum', 'datum', 'summe', 'gesamt', 'gesamtbetrag', 'betrag', 'mwst',
    'ust', 'netto', 'brutto', 'menge', 'preis', 'beschreibung', 'bezeichnung', 'und', 'der', 'die', 'das', 'für',
    'zahlbar', 'zahlung', 'bar', 'zurück', 'rückgeld', 'kunde', 'kundennummer', 'lieferung', 'lieferdatum', 'bitte',
    'vielen', 'dank', 'steuer', 'einzelpreis', 'zu', 'zahlen', 'bankverbindung', 'straße', 'str', 'mit', 'bei', 'ihr',
    'ihre', 'ihren', 'einkauf', 'gegeben', 'stück', 'stk', 'artikel', 'leistung', 'fällig', 'zwischensumme', 'beleg',
    'belegnummer', 'kasse', 'euro', 'tage', 'innerhalb',
  ],
  fr: [
    'facture', 'montant', 'ttc', 'ht', 'tva', 'quantité', 'qté', 'prix', 'désignation', 'unitaire', 'client', 'merci',
    'la', 'le', 'les', 'et', 'pour', 'du', 'à', 'échéance', 'paiement', 'règlement', 'espèces', 'rendu', 'numéro',
    'payer', 'votre', 'vos', 'sous', 'remise', 'livraison', 'sur', 'jours', 'conditions', 'taux', 'ticket', 'caisse',
    'visite', 'rendue', 'monnaie', 'réglé', 'commande', 'date', 'au',
  ],
  nl: [
    'factuur', 'factuurnummer', 'factuurdatum', 'bedrag', 'totaal', 'btw', 'excl', 'incl', 'aantal', 'prijs',
    'omschrijving', 'klant', 'bedankt', 'het', 'een', 'en', 'van', 'voor', 'te', 'betalen', 'vervaldatum', 'betaling',
    'contant', 'wisselgeld', 'subtotaal', 'datum', 'stuksprijs', 'graag', 'tot', 'ziens', 'dagen',
    'binnen', 'klantnummer', 'levering', 'bij', 'uw', 'met', 'op', 'kassabon', 'retour', 'terug',
  ],
  es: [
    'factura', 'fecha', 'importe', 'iva', 'base', 'imponible', 'cantidad', 'precio', 'descripción', 'concepto',
    'cliente', 'gracias', 'el', 'los', 'las', 'y', 'para', 'del', 'vencimiento', 'pago', 'efectivo', 'cambio',
    'número', 'unitario', 'su', 'por', 'con', 'días', 'entrega', 'pedido', 'ticket', 'compra', 'devolución', 'total',
    'la', 'de', 'en',
  ],
  it: [
    'fattura', 'data', 'importo', 'totale', 'iva', 'imponibile', 'quantità', 'qtà', 'prezzo', 'descrizione',
    'cliente', 'grazie', 'di', 'il', 'la', 'e', 'per', 'del', 'della', 'scadenza', 'pagamento', 'contanti', 'resto',
    'numero', 'unitario', 'giorni', 'consegna', 'ordine', 'scontrino', 'arrivederci', 'con', 'dal', 'alla', 'euro',
  ],
}

/** Each word of LANGUAGE_WORDS that one language alone lists, with that language. */
const TELLING_WORDS: ReadonlyMap<string, DocumentLanguage> = (() => {
  const seen = new Map<string, Set<DocumentLanguage>>()
  for (const language of DOCUMENT_LANGUAGES)
    for (const word of LANGUAGE_WORDS[language]) seen.set(word, (seen.get(word) ?? new Set()).add(language))
  return new Map([...seen].filter(([, langs]) => langs.size === 1).map(([word, langs]) => [word, [...langs][0]!]))
})()

/** Telling words a language needs before it is taken, and how many times the runner-up's count it needs. */
const MIN_WORDS = 3
const LEAD = 2

/**
 * The language a document's text is written in, among DOCUMENT_LANGUAGES, by the telling words it uses (each
 * distinct word counted once); undefined when the text holds too few of them or two languages come close.
 */
export function detectLanguage(text: string): DocumentLanguage | undefined {
  const counts = new Map<DocumentLanguage, number>()
  const words = new Set(text.toLowerCase().match(/\p{L}+/gu) ?? [])
  for (const word of words) {
    const language = TELLING_WORDS.get(word)
    if (language) counts.set(language, (counts.get(language) ?? 0) + 1)
  }
  const [first, second] = [...counts].sort((a, b) => b[1] - a[1])
  if (!first || first[1] < MIN_WORDS || first[1] < LEAD * (second?.[1] ?? 0)) return undefined
  return first[0]
}
