import {
  formatDate,
  formatNumber,
  hashSeed,
  int,
  pick,
  rng,
  type Expected,
  type ItemTruth,
  type Rand,
} from './corpus-spec.ts'

/** A till slip: lines of monospace text (left part, right part), what must be read from it and its item rows. */
export type ReceiptSpec = {
  id: string
  country: string
  rows: Array<[string, string]>
  expected: Expected
  items: ItemTruth[]
  /**
   * Rows the slip would have without the quantity lines of the `below` style: the page keeps that height (its rows
   * closer together), so the scan draws as many random numbers as before and every later document stays the same.
   */
  pitchRows: number
}

/**
 * How a till prints an item bought more than once: `2 x COFFEE`, the name then `2 x 3.50` on the line below, or
 * `COFFEE 2 @ 3.50`; the line's amount at the right in each.
 */
const ITEM_STYLES = ['prefix', 'below', 'at'] as const

type Shop = {
  country: string
  currency: string
  names: string[]
  address: string[]
  decimal: ',' | '.'
  /** `{n}` the number. */
  mark: string[]
  date: string[]
  months: string[]
  taxRate: number
  /** Tax included in the prices (EU/SG/IN style) or added on top (US/MY). */
  inclusive: boolean
  taxLabel: string
  totalLabel: string[]
  subtotalLabel: string
  cash: [string, string]
  /** Cash rounding to 0.05 (Malaysia, Singapore? no: MY only here). */
  rounding: boolean
  summary: boolean
}

const EN = 'January February March April May June July August September October November December'.split(' ')

const SHOPS: Shop[] = [
  {
    country: 'MY',
    currency: 'MYR',
    names: ['KEDAI RUNCIT SRI JAYA', 'MAJU MART SDN BHD', 'KOPITIAM AH SENG'],
    address: ['No 12, Jalan Ampang', '50450 Kuala Lumpur'],
    decimal: '.',
    mark: ['RM{n}', 'RM {n}', '{n}'],
    date: ['{dd}/{mm}/{yyyy}', '{dd}-{mm}-{yy}'],
    months: EN,
    taxRate: 6,
    inclusive: false,
    taxLabel: 'SST 6%',
    totalLabel: ['TOTAL', 'TOTAL (RM)', 'NETT TOTAL'],
    subtotalLabel: 'SUBTOTAL',
    cash: ['CASH', 'CHANGE'],
    rounding: true,
    summary: false,
  },
  {
    country: 'SG',
    currency: 'SGD',
    names: ['HAWKER DELIGHTS PTE LTD', 'LION CITY MART PTE LTD'],
    address: ['1 Raffles Place #01-02', 'Singapore 048616'],
    decimal: '.',
    mark: ['S${n}', '{n}', 'SGD {n}'],
    date: ['{dd}/{mm}/{yyyy}', '{dd} {mon} {yyyy}'],
    months: EN,
    taxRate: 9,
    inclusive: true,
    taxLabel: 'GST 9% incl.',
    totalLabel: ['TOTAL', 'Total Amount', 'AMOUNT DUE'],
    subtotalLabel: 'Subtotal',
    cash: ['Cash', 'Change'],
    rounding: false,
    summary: false,
  },
  {
    country: 'HK',
    currency: 'HKD',
    names: ['GOLDEN DRAGON TEA HOUSE', 'KOWLOON CONVENIENCE LTD'],
    address: ['88 Nathan Road, Tsim Sha Tsui', 'Kowloon, Hong Kong'],
    decimal: '.',
    mark: ['HK${n}', '{n}', 'HKD {n}'],
    date: ['{dd}/{mm}/{yyyy}', '{yyyy}-{mm}-{dd}'],
    months: EN,
    taxRate: 0,
    inclusive: true,
    taxLabel: '',
    totalLabel: ['TOTAL', 'Total'],
    subtotalLabel: 'Subtotal',
    cash: ['Cash', 'Change'],
    rounding: false,
    summary: false,
  },
  {
    country: 'IN',
    currency: 'INR',
    names: ['SHREE GANESH SWEETS', 'CITY MEDICALS', 'UDUPI CAFE'],
    address: ['Shop 4, MG Road', 'Pune 411001', 'GSTIN 27AABCU9603R1ZM'],
    decimal: '.',
    mark: ['₹{n}', 'Rs.{n}', 'Rs. {n}', '{n}'],
    date: ['{dd}/{mm}/{yyyy}', '{dd}-{mm}-{yyyy}', '{dd}/{mm}/{yy}'],
    months: EN,
    taxRate: 5,
    inclusive: true,
    taxLabel: 'CGST 2.5% + SGST 2.5%',
    totalLabel: ['NET AMOUNT', 'TOTAL', 'Grand Total'],
    subtotalLabel: 'Sub Total',
    cash: ['Cash', 'Balance'],
    rounding: false,
    summary: false,
  },
  {
    country: 'PL',
    currency: 'PLN',
    names: ['SKLEP SPOZYWCZY ZABKA', 'PIEKARNIA NOWAK SP. Z O.O.'],
    address: ['ul. Marszalkowska 10', '00-590 Warszawa', 'NIP 525-000-00-00'],
    decimal: ',',
    mark: ['{n} zł', '{n} PLN', '{n}'],
    date: ['{yyyy}-{mm}-{dd}', '{dd}.{mm}.{yyyy}'],
    months: EN,
    taxRate: 23,
    inclusive: true,
    taxLabel: 'PTU A 23%',
    totalLabel: ['SUMA PLN', 'SUMA', 'RAZEM'],
    subtotalLabel: 'SPRZEDAZ OPODATK. A',
    cash: ['GOTOWKA', 'RESZTA'],
    rounding: false,
    summary: false,
  },
  {
    country: 'DE',
    currency: 'EUR',
    names: ['BÄCKEREI SCHMIDT', 'DROGERIE MÜLLER GMBH', 'CAFE AM MARKT'],
    address: ['Marktplatz 3', '80331 München'],
    decimal: ',',
    mark: ['{n} €', '{n} EUR', '{n}'],
    date: ['{dd}.{mm}.{yyyy}', '{dd}.{mm}.{yy}'],
    months: EN,
    taxRate: 19,
    inclusive: true,
    taxLabel: '',
    totalLabel: ['SUMME', 'Summe EUR', 'GESAMT', 'Zu zahlen'],
    subtotalLabel: '',
    cash: ['Bar', 'Rückgeld'],
    rounding: false,
    summary: true,
  },
  {
    country: 'GB',
    currency: 'GBP',
    names: ['CORNER SHOP LTD', 'THE KINGS ARMS', 'HIGH STREET NEWS'],
    address: ['22 High Street', 'Leeds LS1 6AB', 'VAT No 123 4567 89'],
    decimal: '.',
    mark: ['£{n}', '{n}'],
    date: ['{dd}/{mm}/{yyyy}', '{dd} {mon} {yyyy}'],
    months: EN,
    taxRate: 20,
    inclusive: true,
    taxLabel: '',
    totalLabel: ['TOTAL', 'BALANCE DUE', 'Total to pay'],
    subtotalLabel: '',
    cash: ['CASH', 'CHANGE DUE'],
    rounding: false,
    summary: true,
  },
  {
    country: 'US',
    currency: 'USD',
    names: ['QUICK STOP MARKET', 'SUNSET DINER', 'MAIN ST HARDWARE'],
    address: ['410 Main Street', 'Boise, ID 83702'],
    decimal: '.',
    mark: ['${n}', '{n}'],
    date: ['{mm}/{dd}/{yyyy}', '{mm}/{dd}/{yy}'],
    months: EN,
    taxRate: 6,
    inclusive: false,
    taxLabel: 'SALES TAX 6%',
    totalLabel: ['TOTAL', 'AMOUNT DUE', 'Total'],
    subtotalLabel: 'SUBTOTAL',
    cash: ['CASH TEND', 'CHANGE'],
    rounding: false,
    summary: false,
  },
  {
    country: 'FR',
    currency: 'EUR',
    names: ['BOULANGERIE DUPONT', 'TABAC DU CENTRE', 'SUPERETTE LECLERC'],
    address: ['14 rue Victor Hugo', '69002 Lyon'],
    decimal: ',',
    mark: ['{n} €', '{n} EUR', '{n}'],
    date: ['{dd}/{mm}/{yyyy}', '{dd}/{mm}/{yy}'],
    months: EN,
    taxRate: 10,
    inclusive: true,
    taxLabel: '',
    totalLabel: ['TOTAL', 'TOTAL TTC', 'A PAYER'],
    subtotalLabel: '',
    cash: ['ESPECES', 'RENDU'],
    rounding: false,
    summary: true,
  },
]

const ITEMS = ['COFFEE', 'BREAD', 'MILK 1L', 'APPLES', 'SOAP', 'NOODLES', 'WATER', 'RICE 5KG', 'TEA', 'EGGS 10']
const WIDTH = 34

const round2 = (n: number): number => Math.round(n * 100) / 100

export function receiptSpec(r: Rand, id: string, countryIndex: number): ReceiptSpec {
  const shop = SHOPS[countryIndex % SHOPS.length] as Shop
  const fmt = (n: number): string => formatNumber(n, { decimal: shop.decimal, group: shop.decimal === ',' ? '.' : ',' })
  const mark = pick(r, shop.mark)
  const money = (n: number): string => mark.replace('{n}', fmt(n))
  const date = new Date(Date.UTC(int(r, 2022, 2025), int(r, 0, 11), int(r, 1, 28)))
  const rows: Array<[string, string]> = []
  rows.push([pick(r, shop.names), ''])
  for (const a of shop.address) rows.push([a, ''])
  rows.push(['', ''])
  const time = `${String(int(r, 7, 21)).padStart(2, '0')}:${String(int(r, 0, 59)).padStart(2, '0')}`
  rows.push([`${formatDate(date, pick(r, shop.date), shop.months)} ${time}`, `#${int(r, 1000, 9999)}`])
  rows.push(['', ''])
  let items = 0
  // The item style has its own seed, so the main stream (dates, totals) stays as it was.
  const style = pick(rng(hashSeed(id)), ITEM_STYLES)
  const truth: ItemTruth[] = []
  let extraRows = 0
  for (let i = 0; i < int(r, 2, 6); i++) {
    const qty = int(r, 1, 3)
    const price = int(r, 80, 2500) / 100
    const line = round2(qty * price)
    items = round2(items + line)
    const name = pick(r, ITEMS)
    truth.push({ description: name, quantity: qty, unit_price: price, amount: line })
    if (qty === 1) rows.push([name, fmt(line)])
    else if (style === 'prefix') rows.push([`${qty} x ${name}`, fmt(line)])
    else if (style === 'at') rows.push([`${name} ${qty} @ ${fmt(price)}`, fmt(line)])
    else {
      rows.push([name, fmt(line)], [`  ${qty} x ${fmt(price)}`, ''])
      extraRows++
    }
  }
  rows.push(['-'.repeat(WIDTH), ''])
  let total = items
  if (!shop.inclusive && shop.taxRate > 0) {
    const tax = round2((items * shop.taxRate) / 100)
    total = round2(items + tax)
    rows.push([shop.subtotalLabel, fmt(items)])
    rows.push([shop.taxLabel, fmt(tax)])
  } else if (shop.subtotalLabel) rows.push([shop.subtotalLabel, fmt(items)])
  let paid = total
  if (shop.rounding) {
    paid = round2(Math.round(total * 20) / 20)
    rows.push([pick(r, shop.totalLabel), money(total)])
    rows.push(['Rounding Adj', fmt(round2(paid - total))])
    rows.push(['TOTAL ROUNDED', money(paid)])
  } else rows.push([pick(r, shop.totalLabel), money(total)])
  if (shop.inclusive && shop.taxLabel) {
    const tax = round2(total - total / (1 + shop.taxRate / 100))
    rows.push([shop.taxLabel, fmt(tax)])
  }
  const tendered = Math.ceil(paid / 10) * 10 + (r() < 0.5 ? 10 : 0)
  rows.push([shop.cash[0], fmt(tendered)])
  rows.push([shop.cash[1], fmt(round2(tendered - paid))])
  if (shop.summary) {
    const net = round2(total / (1 + shop.taxRate / 100))
    rows.push(['', ''])
    rows.push([shop.country === 'DE' ? 'MwSt%   Netto   Steuer   Brutto' : 'VAT%    Net     Tax      Gross', ''])
    rows.push([`A ${shop.taxRate}%   ${fmt(net)}   ${fmt(round2(total - net))}   ${fmt(total)}`, ''])
  }
  rows.push(['', ''])
  rows.push([pick(r, ['THANK YOU', 'Thank you, come again', 'VIELEN DANK', 'MERCI']), ''])
  return {
    id,
    country: shop.country,
    rows,
    expected: { date: date.toISOString().slice(0, 10), amount: paid, currency: shop.currency },
    items: truth,
    pitchRows: rows.length - extraRows,
  }
}

export const RECEIPT_COUNTRIES = SHOPS.length
