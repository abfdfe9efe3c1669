import type { FieldSpec } from './field-candidates.ts'
import type { LabelSpec } from './label-matching.ts'

const l = (weight: number, texts: string[], extra: Omit<LabelSpec, 'text' | 'weight'> = {}): LabelSpec[] =>
  texts.map((text) => ({ text, weight, ...extra }))

const TAX_WORDS = '{VAT|Tax|Taxes|GST|Sales Tax|MwSt|USt|IVA|TVA}'
/** After "Total"/"Amount": words that make it something other than the total due. */
const NOT_TOTAL_AFTER =
  /^[ \t]*(?:\(?[ \t]*)?(?:excl|exclusive|excluding|ex\b|before|net\b|without|w\/o|pre-?tax|ht\b|vat\b|tax\b|taxes\b|gst\b|items?\b|qty\b|quantity|hours?\b|weight|pages?\b|units?\b|paid\b|discount|savings|received|credit|lines?\b|weight|volume|kg\b)/i
/** Before "Total": "Sub-", "Sub " or "Net ". */
const NOT_TOTAL_BEFORE = /(?:sub|net)[ \t-]*$/i
/** After a tax word: an identifier or a rate, not an amount. */
const NOT_TAX_AFTER =
  /^[ \t]*[.:]?[ \t]*(?:no\b|nr\b|n[°º]|number|#|id\b|ident|reg|registration|code|rate|exempt|invoice|point|period|summary|breakdown|details|analysis|%)/i
/** Before a tax word: "incl."/"excl."/"before" or an opening parenthesis make it part of another label. */
const NOT_TAX_BEFORE = /(?:(?:^|[^A-Za-z])(?:incl?|including|inclusive of|excl?|excluding|exclusive of|ex|before|without|w\/o|net of|after)\.?|\()[ \t]*$/i

/** Labels of the built-in invoice fields, strongest first. Weights are how sure the label is. */
export const INVOICE_FIELD_SPECS: readonly FieldSpec[] = [
  {
    name: 'invoice_number',
    type: 'string',
    idLike: true,
    labels: [
      ...l(0.95, ['Invoice No', 'Invoice ID', 'Invoice Ref', 'Invoice Reference', 'Tax Invoice No', 'Rechnungsnummer', 'Rechnung No', 'Facture No', 'Factura No', 'Numéro de facture', 'Número de factura', 'Invoice Code']),
      ...l(0.9, ['Inv No', 'Inv. No', 'Bill No', 'Receipt No', 'Credit Note No', 'Document No', 'Doc No']),
      ...l(0.75, ['Invoice'], { notFollowedBy: /^[ \t]*(?:date|total|amount|to\b|address|period|due|for\b|from\b|summary|details)/i }),
      ...l(0.7, ['Reference', 'Ref', 'Ref No', 'Our Ref', 'Our Reference', 'Rechnung', 'Facture']),
    ],
  },
  {
    name: 'date',
    type: 'date',
    labels: [
      ...l(0.95, ['Invoice Date', 'Date of Invoice', 'Date of Issue', 'Issue Date', 'Invoice Dt', 'Billing Date', 'Bill Date', 'Rechnungsdatum', 'Date de facture', 'Date de facturation', 'Fecha de factura', 'Fecha de emisión', 'Receipt Date']),
      ...l(0.9, ['Date Issued', 'Issued On', 'Issued Date', 'Tax Point', 'Tax Point Date', 'Invoiced On']),
      ...l(0.8, ['Date', 'Dated', 'Issued', 'Datum', 'Fecha', 'Rechnungsdatum/Leistungsdatum']),
    ],
  },
  {
    name: 'due_date',
    type: 'date',
    labels: [
      ...l(0.95, ['Due Date', 'Date Due', 'Payment Due', 'Payment Due Date', 'Payment Date Due', 'Fälligkeitsdatum', 'Fällig am', 'Zahlbar bis', "Date d'échéance", 'Échéance', 'Fecha de vencimiento', 'Vencimiento']),
      ...l(0.9, ['Pay By', 'Due By', 'Due On', 'Payable By', 'Please Pay By', 'Payment By', 'Pay Before', 'Payable Before', 'Expiry Date']),
      ...l(0.75, ['Due', 'Fällig']),
    ],
  },
  {
    name: 'issuer',
    type: 'string',
    accept: (v) => /\p{L}{2,}/u.test(v) && !/^\d/.test(v) && v.length <= 120,
    labels: [
      ...l(0.9, ['Issuer', 'Seller', 'Supplier', 'Vendor', 'Sold By', 'Issued By', 'Bill From', 'Billed By', 'Invoice From', 'Merchant', 'Service Provider', 'Lieferant', 'Fournisseur', 'Proveedor', 'Emisor']),
      ...l(0.85, ['From'], { lineStart: true }),
      ...l(0.75, ['Payee', 'Pay To', 'Payable To', 'Make Cheques Payable To', 'Make Checks Payable To', 'Beneficiary', 'Account Name', 'Account Holder']),
      ...l(0.6, ['Company'], { lineStart: true }),
    ],
  },
  {
    name: 'amount',
    type: 'amount',
    preferLast: true,
    labels: [
      ...l(0.97, ['Total Amount Due', 'Total Due', 'Amount Due', 'Balance Due', 'Grand Total', 'Total Payable', 'Amount Payable', 'Total to Pay', 'Amount to Pay', 'Total Amount Payable', 'Net Payable', 'Total a pagar', 'Net à payer', 'Zu zahlen', 'Zahlbetrag']),
      ...l(0.93, [`{Total|Amount|Invoice Total} {incl.|including|inc.|inclusive of|with} ${TAX_WORDS}`]),
      ...l(0.92, ['Invoice Total', 'Invoice Amount', 'Total Amount', 'Gross Total', 'Total Gross', 'Gross Amount', 'Total TTC', 'Montant TTC', 'Gesamtbetrag', 'Rechnungsbetrag', 'Endbetrag', 'Bruttobetrag', 'Please Pay', 'Total Invoice Amount', 'Order Total'], {
        notFollowedBy: NOT_TOTAL_AFTER,
      }),
      ...l(0.82, ['Total', 'Total Price', 'Gesamt', 'Totaal', 'Importe total'], { notFollowedBy: NOT_TOTAL_AFTER, notPrecededBy: NOT_TOTAL_BEFORE }),
      ...l(0.65, ['Balance', 'Amount', 'Sum', 'Summe'], { notFollowedBy: NOT_TOTAL_AFTER, notPrecededBy: /(?:tax|vat|gst|net|sub|discount)[ \t-]*$/i }),
    ],
  },
  {
    name: 'amount_untaxed',
    type: 'amount',
    labels: [
      ...l(0.95, ['Subtotal', 'Sub Total', 'Untaxed Amount', 'Total HT', 'Montant HT', 'Total hors taxes', 'Nettobetrag', 'Zwischensumme', 'Summe netto', 'Base imponible', 'Taxable Amount', 'Taxable Value']),
      ...l(0.95, [`{Total|Amount|Subtotal|Sum|Value} {excl.|excluding|ex.|exclusive of|before|without|w/o|net of|pre} ${TAX_WORDS}`]),
      ...l(0.92, ['Net Amount', 'Net Total', 'Total Net', 'Total Net Amount', 'Net Value', 'Amount Net', 'Net Sum', 'Pre-tax Total', 'Total before tax', 'Total Excl', 'Total Exclusive', 'Netto']),
      ...l(0.75, ['Net'], { notFollowedBy: /^[ \t]*(?:\d{1,3}[ \t]*(?:days?|d\b|tage)|weight|wt\b|payable|due|terms|price)/i }),
    ],
  },
  {
    name: 'tax',
    type: 'amount',
    labels: [
      ...l(0.95, ['VAT Amount', 'Tax Amount', 'Total VAT', 'Total Tax', 'Total Taxes', 'VAT Total', 'Tax Total', 'GST Amount', 'Total GST', 'Sales Tax Amount', 'Montant TVA', 'Total TVA', 'MwSt Betrag', 'USt Betrag', 'Steuerbetrag', 'Importe IVA', 'Total IVA']),
      ...l(0.9, ['Sales Tax', 'Mehrwertsteuer', 'Umsatzsteuer', 'Value Added Tax', 'Goods and Services Tax', 'Includes GST', 'Includes VAT', 'Consumption Tax'], {
        notFollowedBy: NOT_TAX_AFTER,
        notPrecededBy: NOT_TAX_BEFORE,
      }),
      ...l(0.88, ['VAT', 'GST', 'HST', 'PST', 'QST', 'MwSt', 'USt', 'TVA', 'IVA', 'BTW', 'Tax', 'Taxes'], { notFollowedBy: NOT_TAX_AFTER, notPrecededBy: NOT_TAX_BEFORE }),
    ],
  },
  {
    name: 'currency',
    type: 'currency',
    labels: l(0.95, ['Currency', 'Curr', 'Währung', 'Devise', 'Moneda', 'Valuta', 'Invoice Currency']),
  },
]

/** Labels of things that are not invoice fields; they hide shorter labels inside them. */
export const INVOICE_STOP_LABELS: readonly LabelSpec[] = l(
  1,
  [
    'Order Date', 'Order No', 'Order Number', 'Order Ref', 'Order Reference', 'Sales Order', 'PO No', 'PO Number', 'P.O. No', 'P.O. Number',
    'Purchase Order', 'Purchase Order No', 'Customer No', 'Customer ID', 'Customer Ref', 'Customer Reference', 'Customer VAT',
    'Client No', 'Client ID', 'Client Ref', 'Account No', 'Account ID', 'Member No', 'Contract No', 'Project No', 'Job No',
    'Delivery Date', 'Delivery Note', 'Delivery No', 'Delivery Note No', 'Ship Date', 'Shipping Date', 'Shipment Date', 'Dispatch Date',
    'Date of Supply', 'Supply Date', 'Service Date', 'Service Period', 'Billing Period', 'Period', 'Performance Date', 'Leistungsdatum',
    'Date Paid', 'Payment Date', 'Paid On', 'Amount Paid', 'Total Paid', 'Paid', 'Payments', 'Payment Received',
    'Discount', 'Shipping', 'Freight', 'Deposit', 'Previous Balance', 'Opening Balance', 'Balance Forward', 'Credit',
    'Tax ID', 'Tax No', 'Tax Number', 'Tax Reg No', 'Tax Registration', 'VAT No', 'VAT Number', 'VAT ID', 'VAT Reg', 'VAT Reg No',
    'VAT Registration', 'VAT Registration No', 'GST No', 'GST Number', 'GST Reg No', 'GST Registration', 'ABN', 'EIN', 'TIN',
    'Tax Rate', 'VAT Rate', 'GST Rate', 'Tax Invoice', 'Tax Code', 'Tax Exempt', 'Tax ID No', 'Steuernummer', 'USt-IdNr',
    'Phone', 'Tel', 'Telephone', 'Fax', 'Mobile', 'Email', 'E-mail', 'Web', 'Website', 'IBAN', 'BIC', 'SWIFT', 'Sort Code',
    'Routing No', 'Account Number', 'Bank', 'Bank Name', 'Bill To', 'Billed To', 'Invoice To', 'Invoiced To', 'Ship To', 'Sold To',
    'Deliver To', 'Delivery Address', 'Billing Address', 'Shipping Address', 'Customer', 'Client', 'Payment Terms', 'Terms',
    'Unit Price', 'Price', 'Quantity', 'Qty', 'Rate', 'Description', 'Line Total', 'Item', 'Hours', 'Page', 'Due Upon Receipt',
    'Date of Order', 'Date of Delivery', 'Printed On', 'Created On',
  ],
)

/** Lines/cells that start a customer block (the issuer is never inside one). */
export const CUSTOMER_BLOCK_LABELS = [
  'Bill To', 'Billed To', 'Invoice To', 'Invoiced To', 'Ship To', 'Sold To', 'Deliver To', 'Delivery Address', 'Billing Address',
  'Shipping Address', 'Customer', 'Client', 'To', 'Recipient', 'Buyer', 'Purchaser', 'Attention', 'Attn', 'Rechnungsempfänger',
  'Kunde', 'Destinataire', 'Cliente',
]
