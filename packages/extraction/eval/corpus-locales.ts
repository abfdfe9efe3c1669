/**
 * Writing conventions per locale for the generated evaluation corpus: labels, number and date
 * formats, currency marks. Made up here (no third-party data); the extractor never sees this file.
 */

export type LocaleId = 'en-US' | 'en-GB' | 'en-IN' | 'de-DE' | 'fr-FR' | 'nl-NL' | 'es-ES' | 'it-IT'

export type Locale = {
  id: LocaleId
  currency: string
  /** How an amount is written; `{n}` is the number. `pdfSafe` marks render with the PDF standard fonts. */
  marks: Array<{ pattern: string; pdfSafe: boolean }>
  decimal: ',' | '.'
  group: ',' | '.' | ' ' | "'"
  /** `{d}` `{dd}` `{m}` `{mm}` `{mon}` `{month}` `{yyyy}` `{yy}` */
  dates: string[]
  months: string[]
  title: string[]
  number: string[]
  date: string[]
  due: string[]
  subtotal: string[]
  tax: string[]
  total: string[]
  billTo: string[]
  columns: [string, string, string, string]
  reference: string[]
  /** Labels of dates that are not the invoice's own: delivery, order, print. */
  otherDates: string[]
  /** A tax summary block: its heading and the words over net, tax and gross. */
  summary: { heading: string; net: string; tax: string; gross: string }
  country: string
  cities: string[]
  streets: string[]
  suffixes: string[]
  taxRate: number
}

const EN_MONTHS = 'January February March April May June July August September October November December'.split(' ')

export const LOCALES: Record<LocaleId, Locale> = {
  'en-US': {
    id: 'en-US',
    currency: 'USD',
    marks: [
      { pattern: '${n}', pdfSafe: true },
      { pattern: 'USD {n}', pdfSafe: true },
      { pattern: '{n}', pdfSafe: true },
    ],
    decimal: '.',
    group: ',',
    dates: ['{mm}/{dd}/{yyyy}', '{month} {d}, {yyyy}', '{mon} {d}, {yyyy}', '{m}/{d}/{yy}'],
    months: EN_MONTHS,
    title: ['INVOICE', 'Invoice', 'BILL'],
    number: ['Invoice #', 'Invoice No.', 'Invoice Number', 'INVOICE NO'],
    date: ['Invoice Date', 'Date', 'Date of Issue'],
    due: ['Due Date', 'Payment Due', 'Due By'],
    subtotal: ['Subtotal', 'Sub Total'],
    tax: ['Sales Tax ({r}%)', 'Tax', 'Sales Tax'],
    total: ['Total Due', 'Amount Due', 'Balance Due', 'Total'],
    billTo: ['Bill To', 'Billed To', 'Customer'],
    columns: ['Description', 'Qty', 'Unit Price', 'Amount'],
    reference: ['Order No.', 'Booking Reference', 'Confirmation No.'],
    otherDates: ['Delivery Date', 'Order Date', 'Printed'],
    summary: { heading: 'Tax Summary', net: 'Net', tax: 'Tax', gross: 'Gross' },
    country: 'USA',
    cities: ['Austin, TX 78701', 'Denver, CO 80202', 'Portland, OR 97205', 'Columbus, OH 43215'],
    streets: ['1200 Market Street', '88 Elm Avenue', '455 Lake Drive', '17 Cedar Lane'],
    suffixes: ['Inc.', 'LLC', 'Corp.'],
    taxRate: 8,
  },
  'en-GB': {
    id: 'en-GB',
    currency: 'GBP',
    marks: [
      { pattern: '£{n}', pdfSafe: true },
      { pattern: 'GBP {n}', pdfSafe: true },
      { pattern: '{n}', pdfSafe: true },
    ],
    decimal: '.',
    group: ',',
    dates: ['{dd}/{mm}/{yyyy}', '{d} {month} {yyyy}', '{dd}-{mon}-{yy}', '{d} {mon} {yyyy}'],
    months: EN_MONTHS,
    title: ['INVOICE', 'VAT INVOICE', 'Tax Invoice'],
    number: ['Invoice No', 'Invoice Number', 'Our Ref'],
    date: ['Invoice Date', 'Date', 'Tax Point'],
    due: ['Due Date', 'Payment Due'],
    subtotal: ['Subtotal', 'Net Total', 'Total excl. VAT'],
    tax: ['VAT @ {r}%', 'VAT', 'VAT Amount'],
    total: ['Total Due', 'Total', 'Amount Payable', 'Total incl. VAT'],
    billTo: ['Invoice To', 'Bill To', 'Customer'],
    columns: ['Description', 'Qty', 'Unit Price', 'Net'],
    reference: ['Order Number', 'Booking Ref'],
    otherDates: ['Delivery Date', 'Order Date', 'Printed on'],
    summary: { heading: 'VAT Summary', net: 'Net', tax: 'VAT', gross: 'Gross' },
    country: 'United Kingdom',
    cities: ['London EC1A 1BB', 'Leeds LS1 4AP', 'Bristol BS1 5TR', 'Glasgow G2 1DU'],
    streets: ['14 Harbour Road', '2 Mill Lane', '77 King Street', 'Unit 5, Riverside Park'],
    suffixes: ['Ltd', 'Limited', 'LLP'],
    taxRate: 20,
  },
  'en-IN': {
    id: 'en-IN',
    currency: 'INR',
    marks: [
      { pattern: '₹{n}', pdfSafe: false },
      { pattern: '₹ {n}', pdfSafe: false },
      { pattern: 'Rs. {n}', pdfSafe: true },
      { pattern: 'INR {n}', pdfSafe: true },
      { pattern: '{n}', pdfSafe: true },
    ],
    decimal: '.',
    group: ',',
    dates: ['{dd}/{mm}/{yyyy}', '{dd}-{mm}-{yyyy}', '{dd}-{mon}-{yyyy}', '{dd}/{mm}/{yy}'],
    months: EN_MONTHS,
    title: ['TAX INVOICE', 'Invoice', 'BILL OF SUPPLY'],
    number: ['Invoice No.', 'Bill No.', 'Inv. No.'],
    date: ['Invoice Date', 'Dated', 'Date'],
    due: ['Due Date', 'Payment Due By'],
    subtotal: ['Taxable Value', 'Sub Total', 'Subtotal'],
    tax: ['IGST @ {r}%', 'GST {r}%', 'Total GST'],
    total: ['Grand Total', 'Total Amount', 'Net Payable', 'Amount Payable'],
    billTo: ['Bill To', 'Buyer', 'Billed To'],
    columns: ['Particulars', 'Qty', 'Rate', 'Amount'],
    reference: ['Order ID', 'Booking ID'],
    otherDates: ['Delivery Date', 'Order Date', 'Printed on'],
    summary: { heading: 'GST Summary', net: 'Taxable', tax: 'GST', gross: 'Total' },
    country: 'India',
    cities: ['Mumbai 400001', 'Bengaluru 560001', 'Pune 411001', 'Chennai 600002'],
    streets: ['Plot 12, MIDC', '3rd Floor, Tower B', '45 MG Road', '221 Link Road'],
    suffixes: ['Pvt. Ltd.', 'Private Limited', 'LLP'],
    taxRate: 18,
  },
  'de-DE': {
    id: 'de-DE',
    currency: 'EUR',
    marks: [
      { pattern: '{n} €', pdfSafe: true },
      { pattern: '{n} EUR', pdfSafe: true },
      { pattern: 'EUR {n}', pdfSafe: true },
      { pattern: '{n}', pdfSafe: true },
    ],
    decimal: ',',
    group: '.',
    dates: ['{dd}.{mm}.{yyyy}', '{d}. {month} {yyyy}', '{dd}.{mm}.{yy}'],
    months: 'Januar Februar März April Mai Juni Juli August September Oktober November Dezember'.split(' '),
    title: ['RECHNUNG', 'Rechnung'],
    number: ['Rechnungsnummer', 'Rechnungs-Nr.', 'Rechnung Nr.', 'Beleg-Nr.'],
    date: ['Rechnungsdatum', 'Datum'],
    due: ['Fällig am', 'Zahlbar bis', 'Fälligkeitsdatum'],
    subtotal: ['Nettobetrag', 'Zwischensumme', 'Summe netto'],
    tax: ['MwSt. {r}%', 'zzgl. {r}% USt.', 'Umsatzsteuer {r}%'],
    total: ['Gesamtbetrag', 'Rechnungsbetrag', 'Zu zahlen', 'Endbetrag'],
    billTo: ['Rechnungsempfänger', 'Kunde', 'An'],
    columns: ['Bezeichnung', 'Menge', 'Einzelpreis', 'Gesamt'],
    reference: ['Bestellnummer', 'Buchungsnummer', 'Auftragsnummer'],
    otherDates: ['Lieferdatum', 'Bestelldatum', 'Druckdatum'],
    summary: { heading: 'MwSt-Übersicht', net: 'Netto', tax: 'MwSt', gross: 'Brutto' },
    country: 'Deutschland',
    cities: ['10115 Berlin', '80331 München', '50667 Köln', '20095 Hamburg'],
    streets: ['Hauptstraße 12', 'Bahnhofstr. 4', 'Lindenweg 27', 'Am Markt 3'],
    suffixes: ['GmbH', 'AG', 'GmbH & Co. KG'],
    taxRate: 19,
  },
  'fr-FR': {
    id: 'fr-FR',
    currency: 'EUR',
    marks: [
      { pattern: '{n} €', pdfSafe: true },
      { pattern: '{n} EUR', pdfSafe: true },
      { pattern: '{n}', pdfSafe: true },
    ],
    decimal: ',',
    group: ' ',
    dates: ['{dd}/{mm}/{yyyy}', '{d} {month} {yyyy}', '{dd}/{mm}/{yy}'],
    months: 'janvier février mars avril mai juin juillet août septembre octobre novembre décembre'.split(' '),
    title: ['FACTURE', 'Facture'],
    number: ['Facture N°', 'N° de facture', 'Numéro de facture'],
    date: ['Date de facture', 'Date', "Date d'émission"],
    due: ["Date d'échéance", 'Échéance'],
    subtotal: ['Total HT', 'Montant HT', 'Sous-total'],
    tax: ['TVA {r}%', 'TVA ({r} %)', 'Montant TVA'],
    total: ['Total TTC', 'Net à payer', 'Montant TTC'],
    billTo: ['Client', 'Facturé à', 'Destinataire'],
    columns: ['Désignation', 'Qté', 'Prix unitaire', 'Montant'],
    reference: ['N° de commande', 'Référence'],
    otherDates: ['Date de livraison', 'Date de commande', 'Imprimé le'],
    summary: { heading: 'Récapitulatif TVA', net: 'Base HT', tax: 'TVA', gross: 'TTC' },
    country: 'France',
    cities: ['75002 Paris', '69001 Lyon', '33000 Bordeaux', '13001 Marseille'],
    streets: ['12 rue de la Paix', '8 avenue Victor Hugo', '27 boulevard Voltaire', '3 place Bellecour'],
    suffixes: ['SARL', 'SAS', 'SA'],
    taxRate: 20,
  },
  'nl-NL': {
    id: 'nl-NL',
    currency: 'EUR',
    marks: [
      { pattern: '€ {n}', pdfSafe: true },
      { pattern: 'EUR {n}', pdfSafe: true },
      { pattern: '{n}', pdfSafe: true },
    ],
    decimal: ',',
    group: '.',
    dates: ['{dd}-{mm}-{yyyy}', '{d} {month} {yyyy}', '{dd}-{mm}-{yy}'],
    months: 'januari februari maart april mei juni juli augustus september oktober november december'.split(' '),
    title: ['FACTUUR', 'Factuur'],
    number: ['Factuurnummer', 'Factuur nr.', 'Factuurnr.'],
    date: ['Factuurdatum', 'Datum'],
    due: ['Vervaldatum', 'Te betalen voor'],
    subtotal: ['Subtotaal', 'Totaal excl. BTW', 'Netto bedrag'],
    tax: ['BTW {r}%', 'BTW-bedrag', 'BTW ({r}%)'],
    total: ['Totaal', 'Te betalen', 'Totaal incl. BTW', 'Totaalbedrag'],
    billTo: ['Factuuradres', 'Klant', 'Aan'],
    columns: ['Omschrijving', 'Aantal', 'Prijs', 'Bedrag'],
    reference: ['Bestelnummer', 'Boekingsnummer'],
    otherDates: ['Leverdatum', 'Besteldatum', 'Afgedrukt op'],
    summary: { heading: 'BTW-overzicht', net: 'Netto', tax: 'BTW', gross: 'Bruto' },
    country: 'Nederland',
    cities: ['1012 AB Amsterdam', '3011 AD Rotterdam', '3511 BK Utrecht', '2511 CV Den Haag'],
    streets: ['Keizersgracht 112', 'Coolsingel 40', 'Oudegracht 9', 'Lange Voorhout 5'],
    suffixes: ['B.V.', 'V.O.F.', 'N.V.'],
    taxRate: 21,
  },
  'es-ES': {
    id: 'es-ES',
    currency: 'EUR',
    marks: [
      { pattern: '{n} €', pdfSafe: true },
      { pattern: '{n} EUR', pdfSafe: true },
      { pattern: '{n}', pdfSafe: true },
    ],
    decimal: ',',
    group: '.',
    dates: ['{dd}/{mm}/{yyyy}', '{d} de {month} de {yyyy}', '{dd}-{mm}-{yy}'],
    months: 'enero febrero marzo abril mayo junio julio agosto septiembre octubre noviembre diciembre'.split(' '),
    title: ['FACTURA', 'Factura'],
    number: ['Factura Nº', 'Nº de factura', 'Número de factura', 'Factura núm.'],
    date: ['Fecha de factura', 'Fecha', 'Fecha de emisión'],
    due: ['Fecha de vencimiento', 'Vencimiento'],
    subtotal: ['Base imponible', 'Subtotal'],
    tax: ['IVA {r}%', 'IVA ({r}%)', 'Cuota IVA'],
    total: ['Total factura', 'Total a pagar', 'Importe total', 'TOTAL'],
    billTo: ['Cliente', 'Facturar a'],
    columns: ['Descripción', 'Cant.', 'Precio', 'Importe'],
    reference: ['Número de pedido', 'Número de reserva', 'Referencia'],
    otherDates: ['Fecha de entrega', 'Fecha de pedido', 'Impreso el'],
    summary: { heading: 'Resumen IVA', net: 'Base', tax: 'Cuota', gross: 'Total' },
    country: 'España',
    cities: ['28013 Madrid', '08002 Barcelona', '46001 Valencia', '41001 Sevilla'],
    streets: ['Calle Mayor 15', 'Avenida Diagonal 210', 'Calle de Alcalá 48', 'Plaza Nueva 2'],
    suffixes: ['S.L.', 'S.A.', 'S.L.U.'],
    taxRate: 21,
  },
  'it-IT': {
    id: 'it-IT',
    currency: 'EUR',
    marks: [
      { pattern: '€ {n}', pdfSafe: true },
      { pattern: '{n} €', pdfSafe: true },
      { pattern: 'EUR {n}', pdfSafe: true },
      { pattern: '{n}', pdfSafe: true },
    ],
    decimal: ',',
    group: '.',
    dates: ['{dd}/{mm}/{yyyy}', '{d} {month} {yyyy}', '{dd}/{mm}/{yy}'],
    months: 'gennaio febbraio marzo aprile maggio giugno luglio agosto settembre ottobre novembre dicembre'.split(' '),
    title: ['FATTURA', 'Fattura'],
    number: ['Fattura n.', 'Numero fattura', 'Fattura N°', 'N. documento'],
    date: ['Data fattura', 'Data', 'Data documento'],
    due: ['Scadenza', 'Data scadenza'],
    subtotal: ['Imponibile', 'Totale imponibile'],
    tax: ['IVA {r}%', 'IVA ({r}%)', 'Totale IVA'],
    total: ['Totale documento', 'Totale da pagare', 'Totale fattura', 'TOTALE'],
    billTo: ['Spett.le', 'Cliente', 'Destinatario'],
    columns: ['Descrizione', 'Q.tà', 'Prezzo', 'Importo'],
    reference: ['Numero ordine', 'Riferimento'],
    otherDates: ['Data di consegna', 'Data ordine', 'Stampato il'],
    summary: { heading: 'Riepilogo IVA', net: 'Imponibile', tax: 'Imposta', gross: 'Totale' },
    country: 'Italia',
    cities: ['20121 Milano', '00184 Roma', '10121 Torino', '50122 Firenze'],
    streets: ['Via Roma 21', 'Corso Buenos Aires 8', 'Via Garibaldi 44', 'Piazza Duomo 1'],
    suffixes: ['S.r.l.', 'S.p.A.', 'S.n.c.'],
    taxRate: 22,
  },
}
