import { renderTextPng } from '../test/fixtures.ts'
import { createTesseractOcrEngine } from '../src/ocr.ts'
import { readInDocumentLanguage } from '../src/create-ocr-engine.ts'
const png = await renderTextPng([
  'Bäckerei Müller GmbH, Hauptstraße 12, 80331 München',
  'Rechnung Nr. RE-2024/118   Rechnungsdatum: 03.05.2024',
  'Menge  Bezeichnung            Einzelpreis   Gesamt',
  '2      Brötchen mit Käse        3,50 €       7,00 €',
  '1      Geräte-Prüfung         120,00 €     120,00 €',
  'Zwischensumme 127,00 €   MwSt 19 % 24,13 €',
  'Gesamtbetrag 151,13 €   Zahlbar innerhalb 14 Tagen',
  'Vielen Dank für Ihren Einkauf! Rückgeld 0,00 €',
])
const t = createTesseractOcrEngine()
let s = Date.now()
console.log((await t.recognize(png)).text, Date.now() - s)
s = Date.now()
const de = await t.recognize(png, { languages: ['de'] })
console.log(de.text, de.language, Date.now() - s)
const auto = readInDocumentLanguage(t)
s = Date.now()
const a = await auto.recognize(png)
console.log(a.language, Date.now() - s)
await t.close()
