// File limits as configuration, black box (DESIGN, "Robustness and operations": what a file may cost is bounded while
// it is read). The apps run with QUIRE_MAX_PAGES=3 and QUIRE_MAX_IMAGE_PIXELS=1000000: a PDF of more pages is refused
// at intake (its page count is known there), an image over the pixel limit fails at initialization; both leave the
// workspace's credits as they were. Credits for a DOCX come from its text, not from the page count it claims.
import sharp from 'sharp'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { docxClaimingOnePage } from '../fixtures/bombs.ts'
import { textPdf } from '../fixtures/make-fixtures.ts'
import { call, fileForm, newWorkspace, pollUntil } from './client.ts'
import { startStack, type Stack } from './stack.ts'

let stack: Stack
beforeAll(async () => {
  stack = await startStack({ env: { QUIRE_MAX_PAGES: '3', QUIRE_MAX_IMAGE_PIXELS: '1000000' } })
}, 120_000)
afterAll(async () => {
  await stack?.stop()
})

const pages = (n: number) => textPdf(Array.from({ length: n }, (_, i) => [`Page ${i + 1} of a long report`]))

describe('QUIRE_MAX_PAGES', () => {
  it('a PDF of more pages is refused at intake: 422 FILE_TOO_LARGE naming pages and limit, no job, no credits held', async () => {
    for (const form of ['B', 'A'] as const) {
      const { key } = await newWorkspace(stack.baseUrl, form, { credits: 100 })
      const field = form === 'A' ? 'file' : 'files'
      const extra: Record<string, string> = form === 'A' ? { pipeline_id: 'parse' } : {}
      const r = await call(stack.baseUrl, 'POST', '/v1/jobs', {
        key,
        form: fileForm(field, [{ name: 'long.pdf', bytes: await pages(4) }], extra),
      })
      expect(r.status, form).toBe(422)
      expect(r.body, form).toMatchObject({
        error: 'FILE_TOO_LARGE',
        message: expect.stringMatching(/long\.pdf.*4 pages.*at most 3/),
        details: { pages: 4, max_pages: 3 },
      })
      const list = await call(stack.baseUrl, 'GET', '/v1/jobs', { key })
      expect(list.body.data, form).toEqual([])
      const credits = await call(stack.baseUrl, 'GET', '/v1/credits', { key })
      expect(credits.body, form).toMatchObject({ available: 100, reserved: 0, spent: 0 })
      // At the limit: accepted, three pages reserved.
      const ok = await call(stack.baseUrl, 'POST', '/v1/jobs', {
        key,
        form: fileForm(field, [{ name: 'three.pdf', bytes: await pages(3) }], extra),
      })
      expect(ok.status, form).toBe(202)
    }
  })
})

describe('QUIRE_MAX_IMAGE_PIXELS', () => {
  it('an image over the limit is accepted, then fails at initialization as file_too_large; hold released', async () => {
    const { key } = await newWorkspace(stack.baseUrl, 'B', { credits: 100 })
    const png = await sharp({ create: { width: 2000, height: 1000, channels: 3, background: '#ffffff' } })
      .png()
      .toBuffer()
    const r = await call(stack.baseUrl, 'POST', '/v1/jobs', {
      key,
      form: fileForm('files', [{ name: 'wide.png', bytes: png }]),
    })
    expect(r.status).toBe(202)
    const done = await pollUntil(
      () => call(stack.baseUrl, 'GET', `/v1/jobs/${r.body[0].job_id}`, { key }),
      (x) => x.body.status === 'failed',
      60_000,
    )
    expect(done.body.error).toMatchObject({
      code: 'file_too_large',
      stage: 'initialization',
      message: expect.stringMatching(/more than 1 megapixels/),
    })
    const credits = await call(stack.baseUrl, 'GET', '/v1/credits', { key })
    expect(credits.body).toMatchObject({ available: 100, reserved: 0, spent: 0 })
    expect((await fetch(`${stack.baseUrl}/healthz`)).status).toBe(200)
  }, 90_000)
})

describe('DOCX pages for credits come from the content', () => {
  it('a 93-page DOCX claiming <Pages>1</Pages> reserves and is charged 93 pages', async () => {
    const { key } = await newWorkspace(stack.baseUrl, 'B', { credits: 100 })
    const r = await call(stack.baseUrl, 'POST', '/v1/jobs', {
      key,
      form: fileForm('files', [{ name: 'claims-one-page.docx', bytes: docxClaimingOnePage(93) }]),
    })
    expect(r.status).toBe(202)
    const done = await pollUntil(
      () => call(stack.baseUrl, 'GET', `/v1/jobs/${r.body[0].job_id}`, { key }),
      (x) => x.body.status === 'completed' || x.body.status === 'failed',
      90_000,
    )
    expect(done.body.status).toBe('completed')
    expect(done.body.input.page_count).toBe(93)
    const credits = await call(stack.baseUrl, 'GET', '/v1/credits', { key })
    expect(credits.body).toMatchObject({ available: 7, reserved: 0, spent: 93 })
  }, 120_000)
})
