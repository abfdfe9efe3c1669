import { afterAll, describe, expect, it } from 'vitest'
import { makeTempDir, renderTextPng, writeFixture } from '../test/fixtures.ts'
import { createOcrEngine, readInDocumentLanguage } from './create-ocr-engine.ts'
import { detectLanguage } from './detect-language.ts'
import { parseDocument } from './parse-document.ts'
import { createTesseractOcrEngine } from './ocr.ts'

// DESIGN, Extraction: "Documents of German, French, Dutch, Spanish and Italian are read in their own conventions
// (labels, decimal commas, OCR letters); a pipeline may name `languages`, otherwise Quire decides from the text."

describe('detectLanguage: the language of a document from the words it prints', () => {
  const pages: Record<string, string> = {
    en: 'INVOICE\nBill to: Acme Ltd\nDescription Qty Unit price Amount\nSubtotal 120.00\nTax 24.00\nTotal due 144.00\nThank you for your business',
    de: 'Rechnung\nRechnungsdatum 03.05.2024\nMenge Bezeichnung Einzelpreis\nZwischensumme 127,00\nMwSt 19 %\nGesamtbetrag 151,13\nVielen Dank für Ihren Einkauf',
    fr: 'FACTURE\nDate 03/05/2024\nDésignation Quantité Prix unitaire\nTotal HT 127,00\nTVA 20 %\nTotal TTC 152,40\nMerci pour votre commande',
    nl: 'FACTUUR\nFactuurdatum 03-05-2024\nOmschrijving Aantal Prijs\nSubtotaal 127,00\nBTW 21%\nTotaal te betalen 153,67\nBedankt voor uw bestelling',
    es: 'FACTURA\nFecha 03/05/2024\nDescripción Cantidad Precio\nBase imponible 127,00\nIVA 21%\nTotal 153,67\nGracias por su compra',
    it: 'FATTURA\nData 03/05/2024\nDescrizione Quantità Prezzo\nImponibile 127,00\nIVA 22%\nTotale 154,94\nGrazie per la visita',
  }
  for (const [language, text] of Object.entries(pages))
    it(`tells ${language} from its labels and words`, () => {
      expect(detectLanguage(text)).toBe(language)
    })

  it('says nothing of a page of names and figures, or of a page mixing two languages evenly', () => {
    expect(detectLanguage('ACME 42\n12.50\n7.20\nSMITH J\n2024-05-03 14:22')).toBeUndefined()
    expect(detectLanguage('Rechnung Betrag Summe\nFacture Montant TTC')).toBeUndefined()
  })
})

describe('OCR in the language of the page', () => {
  const german = renderTextPng([
    'Bäckerei Müller GmbH, Hauptstraße 12, München',
    'Rechnung Nr. RE-2024/118   Rechnungsdatum: 03.05.2024',
    'Menge  Bezeichnung            Einzelpreis   Gesamt',
    '2      Brötchen mit Käse        3,50 €       7,00 €',
    'Zwischensumme 7,00 €   MwSt 7 % 0,46 €',
    'Gesamtbetrag 7,00 €   Zahlbar innerhalb 14 Tagen',
    'Vielen Dank für Ihren Einkauf! Rückgeld 0,00 €',
  ])
  const tesseract = createTesseractOcrEngine()
  afterAll(() => tesseract.close())

  it("reads a page in the languages the caller names, with that language's letters", async () => {
    const read = await tesseract.recognize(await german, { languages: ['de'] })
    expect(read.language).toBe('de')
    expect(read.text).toContain('Müller')
    expect(read.text).toContain('Rückgeld')
    expect(read.text).toContain('Hauptstraße')
  })

  it("parses a document with the pipeline's languages", async () => {
    const tmp = await makeTempDir()
    try {
      const path = await writeFixture(tmp.file('page.png'), await german)
      const parsed = await parseDocument(path, 'png', { ocr: tesseract, languages: ['de'] })
      expect(parsed.pages[0]).toContain('Hauptstraße')
    } finally {
      await tmp.cleanup()
    }
  })

  it('reads again in the language the first reading turns out to be in, and once when it is English', async () => {
    const engine = readInDocumentLanguage(tesseract)
    const read = await engine.recognize(await german)
    expect(read.language).toBe('de')
    expect(read.text).toContain('Brötchen')
    const english = await engine.recognize(
      await renderTextPng(['INVOICE', 'Description  Qty  Amount', 'Total due 144.00', 'Thank you for your business']),
    )
    expect(english.language).toBe('en')
  })

  it('reads with several languages at once, and says which model is missing', async () => {
    const read = await tesseract.recognize(await german, { languages: ['de', 'fr'] })
    expect(read.text).toContain('Käse')
    expect(read.language).toBeUndefined()
    const fused = createOcrEngine({ engine: 'fused' })
    try {
      const both = await fused.recognize(await german, { languages: ['de'] })
      expect(both.text).toContain('Müller')
      expect(both.second?.text).toMatch(/Gesamtbetrag/)
    } finally {
      await fused.close()
    }
    const tmp = await makeTempDir()
    const noModels = createTesseractOcrEngine({ langPath: tmp.dir })
    await expect(noModels.recognize(await german, { languages: ['de'] })).rejects.toMatchObject({
      code: 'ocr_unavailable',
      message: expect.stringContaining('deu.traineddata.gz'),
    })
    await tmp.cleanup()
  })
})
