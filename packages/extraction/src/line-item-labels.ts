/**
 * Vocabulary of item tables, as data per locale: the words that head each column, and the labels that end the
 * table (the totals block). Matched case-insensitively as whole words; longer phrases win over shorter ones
 * ("Unit Price" over "Price", "Total HT" over "Total").
 */

export type ItemColumn = 'position' | 'description' | 'quantity' | 'unit_price' | 'amount'

type Vocabulary = Record<ItemColumn, readonly string[]>

const HEADERS: Record<'en' | 'de' | 'fr' | 'nl' | 'es' | 'it', Vocabulary> = {
  en: {
    position: ['#', 'No.', 'Pos.', 'Line'],
    description: [
      'Description',
      'Item',
      'Items',
      'Item Description',
      'Product',
      'Service',
      'Details',
      'Particulars',
      'Article',
    ],
    quantity: ['Qty', 'Qty.', 'Quantity', 'Units', 'Hours', 'Hrs'],
    unit_price: ['Unit Price', 'Price', 'Rate', 'Unit Cost', 'Price/Unit', 'Unit Rate', 'Each'],
    amount: ['Amount', 'Total', 'Line Total', 'Net', 'Net Amount', 'Sum'],
  },
  de: {
    position: ['Pos.', 'Pos', 'Nr.'],
    description: ['Bezeichnung', 'Beschreibung', 'Artikel', 'Artikelbezeichnung', 'Leistung', 'Produkt', 'Text'],
    quantity: ['Menge', 'Anzahl', 'Anz.', 'Stk.', 'Stück'],
    unit_price: ['Einzelpreis', 'Preis', 'E-Preis', 'Stückpreis', 'Einzelpr.', 'Preis/Einheit'],
    amount: ['Gesamt', 'Betrag', 'Gesamtpreis', 'Summe', 'Gesamtbetrag', 'Netto'],
  },
  fr: {
    position: ['N°', 'No'],
    description: ['Désignation', 'Designation', 'Description', 'Article', 'Libellé', 'Produit', 'Prestation'],
    quantity: ['Qté', 'Qte', 'Quantité', 'Nb'],
    unit_price: ['Prix unitaire', 'Prix unit.', 'P.U.', 'PU', 'PU HT', 'Prix unitaire HT', 'Prix'],
    amount: ['Montant', 'Montant HT', 'Total HT', 'Total'],
  },
  nl: {
    position: ['Nr.', 'Nr'],
    description: ['Omschrijving', 'Beschrijving', 'Artikel', 'Product', 'Dienst'],
    quantity: ['Aantal', 'Hoeveelheid', 'Aant.'],
    unit_price: ['Prijs', 'Stukprijs', 'Eenheidsprijs', 'Prijs per stuk'],
    amount: ['Bedrag', 'Totaal', 'Subtotaal'],
  },
  es: {
    position: ['N.º', 'Nº', 'N°'],
    description: ['Descripción', 'Descripcion', 'Concepto', 'Artículo', 'Producto', 'Detalle'],
    quantity: ['Cantidad', 'Cant.', 'Uds.', 'Unidades'],
    unit_price: ['Precio', 'Precio unitario', 'Precio unit.', 'P. unit.'],
    amount: ['Importe', 'Total', 'Subtotal'],
  },
  it: {
    position: ['N.', 'Nr.'],
    description: ['Descrizione', 'Articolo', 'Prodotto', 'Servizio', 'Dettaglio'],
    quantity: ['Quantità', 'Q.tà', 'Qtà', 'Qta', 'Q.ta'],
    unit_price: ['Prezzo', 'Prezzo unitario', 'Prezzo unit.'],
    amount: ['Importo', 'Totale'],
  },
}

/** Where the items end: the first line that starts with one of these (subtotal, tax, total, payment). */
const TABLE_END: Record<keyof typeof HEADERS | 'till', readonly string[]> = {
  en: [
    'Subtotal',
    'Sub Total',
    'Sub-total',
    'Total',
    'Net Total',
    'Tax',
    'Sales Tax',
    'VAT',
    'GST',
    'Amount Due',
    'Balance',
    'Grand Total',
    'Taxable Value',
    'IGST',
    'CGST',
  ],
  de: [
    'Zwischensumme',
    'Summe',
    'Nettobetrag',
    'Gesamtbetrag',
    'Rechnungsbetrag',
    'Endbetrag',
    'Zu zahlen',
    'MwSt',
    'USt',
    'zzgl',
    'Umsatzsteuer',
    'Gesamt',
  ],
  fr: ['Sous-total', 'Total HT', 'Montant HT', 'Total TTC', 'Montant TTC', 'TVA', 'Net à payer', 'Total'],
  nl: ['Subtotaal', 'Totaal', 'BTW', 'Te betalen', 'Netto bedrag'],
  es: ['Base imponible', 'Subtotal', 'IVA', 'Total', 'Cuota IVA', 'Importe total'],
  it: ['Imponibile', 'Totale', 'IVA'],
  till: [
    'SUMA',
    'RAZEM',
    'PTU',
    'SPRZEDAZ',
    'NETT TOTAL',
    'Rounding',
    'CASH',
    'Bar',
    'ESPECES',
    'A PAYER',
    'Net Amount',
  ],
}

const byLengthDesc = (a: { text: string }, b: { text: string }): number => b.text.length - a.text.length

/** Every header word with its column, longest first (all locales: a table is read whatever its language). */
export const ITEM_HEADER_WORDS: ReadonlyArray<{ text: string; column: ItemColumn }> = Object.values(HEADERS)
  .flatMap((v) =>
    (Object.entries(v) as Array<[ItemColumn, readonly string[]]>).flatMap(([column, words]) =>
      words.map((text) => ({ text, column })),
    ),
  )
  .filter((w, i, all) => all.findIndex((o) => o.text.toLowerCase() === w.text.toLowerCase()) === i)
  .sort(byLengthDesc)

/** Labels that end an item table, longest first. */
export const ITEM_TABLE_END_WORDS: readonly string[] = [...new Set(Object.values(TABLE_END).flat())].sort(
  (a, b) => b.length - a.length,
)
