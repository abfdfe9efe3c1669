import { describe, expect, it } from 'vitest'
import sharp from 'sharp'
import { FONT_AVAILABLE, renderTextPng } from '../test/fixtures.ts'
import { estimateSkewDegrees, prepareScan } from './prepare-scan.ts'

const LINES = Array.from({ length: 12 }, (_, i) => `Line ${i + 1}: Widget ${i * 7} at 12.50 each`)

describe.skipIf(!FONT_AVAILABLE)('prepareScan', { timeout: 30_000 }, () => {
  it('measures a page turned by a few degrees, and a level one as level', async () => {
    const level = await renderTextPng(LINES, { width: 900, fontSize: 24 })
    expect(Math.abs(await estimateSkewDegrees(level))).toBeLessThanOrEqual(0.25)
    const turned = await sharp(level).rotate(3, { background: '#ffffff' }).png().toBuffer()
    const measured = await estimateSkewDegrees(turned)
    expect(Math.abs(measured)).toBeGreaterThanOrEqual(2.5)
    expect(Math.abs(measured)).toBeLessThanOrEqual(3.5)
    // Straightening by the measured angle levels the page again.
    const straightened = await sharp(turned).rotate(-measured, { background: '#ffffff' }).png().toBuffer()
    expect(Math.abs(await estimateSkewDegrees(straightened))).toBeLessThanOrEqual(0.5)
  })

  it('upscales a narrow page and leaves only black and white, text dark on a grey background too', async () => {
    const png = await renderTextPng(LINES, { width: 600, fontSize: 16 })
    // Faded print on grey paper: the text at 100/255, the paper at 180/255.
    const faded = await sharp(png)
      .linear(80 / 255, 100)
      .png()
      .toBuffer()
    const prepared = await prepareScan(faded)
    const { data, info } = await sharp(prepared).greyscale().raw().toBuffer({ resolveWithObject: true })
    expect(info.width).toBe(1400)
    const values = new Set(data)
    expect([...values].every((v) => v === 0 || v === 255)).toBe(true)
    const dark = data.filter((v) => v === 0).length / data.length
    // Ink, not a black page: the grey paper came out white.
    expect(dark).toBeGreaterThan(0.01)
    expect(dark).toBeLessThan(0.3)
  })
})
