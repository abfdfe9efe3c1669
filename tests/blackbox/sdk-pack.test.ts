// @quire/client as a user gets it: `npm pack`, then `npm install <tarball>` into an empty folder (dependencies from
// the npm registry only), then the installed `quire` CLI against a real stack, on the Node running the tests.
import { execFile } from 'node:child_process'
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { createClient } from '@quire/client'
import { afterAll, describe, expect, it } from 'vitest'
import { invoicePdf, scannedPdf } from '../fixtures/make-fixtures.ts'
import { newWorkspace } from './client.ts'
import { useStackWithReceiver } from './stack.ts'

const run = promisify(execFile)
const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..')
const ctx = useStackWithReceiver()
const dir = mkdtempSync(path.join(os.tmpdir(), 'quire-pack-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

// `npm test` runs under npm, whose npm_* variables (workspace, prefix, ...) would steer the nested npm commands.
const cleanEnv = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.toLowerCase().startsWith('npm_')))

/** Runs a command and answers its exit code and output instead of throwing on a non-zero exit. */
async function sh(file: string, args: string[], opts: { cwd: string; env?: Record<string, string> }) {
  try {
    const { stdout, stderr } = await run(file, args, { ...opts, env: { ...cleanEnv, ...opts.env }, timeout: 150_000 })
    return { code: 0, stdout, stderr }
  } catch (error) {
    const e = error as { code?: number; stdout?: string; stderr?: string }
    return { code: typeof e.code === 'number' ? e.code : -1, stdout: e.stdout ?? '', stderr: e.stderr ?? '' }
  }
}

describe('@quire/client tarball', () => {
  it('installs from the registry alone into an empty folder; its CLI prints help, lists jobs, submits and waits, reads a document', async () => {
    const packed = await sh('npm', ['pack', '--json', '--pack-destination', dir], { cwd: `${ROOT}/packages/client` })
    expect(packed.code, packed.stderr).toBe(0)
    const [info] = JSON.parse(packed.stdout.slice(packed.stdout.indexOf('['))) as [{ filename: string; size: number }]
    expect(info.size).toBeLessThan(200_000)

    const app = path.join(dir, 'app')
    mkdirSync(app)
    const installed = await sh('npm', ['install', '--no-audit', '--no-fund', path.join(dir, info.filename)], {
      cwd: app,
    })
    expect(installed.code, installed.stderr).toBe(0)
    const quire = path.join(app, 'node_modules', '.bin', 'quire')

    const help = await sh(quire, ['--help'], { cwd: app })
    expect(help).toMatchObject({ code: 0, stdout: expect.stringContaining('Usage: quire') })
    const imported = await sh(process.execPath, ['--input-type=module', '-e', LIBRARY_CHECK], { cwd: app })
    expect(imported.stdout.trim(), imported.stderr).toBe('function function function')

    const { key } = await newWorkspace(ctx.stack.baseUrl, 'B')
    const client = createClient({ form: 'B', baseUrl: ctx.stack.baseUrl, apiKey: key })
    const [job] = await client.submit([{ data: await invoicePdf(), name: 'invoice.pdf' }])
    const env = { QUIRE_URL: ctx.stack.baseUrl, QUIRE_API_KEY: key }
    // No --form: the CLI reads the key's form from the served OpenAPI document.
    const list = await sh(quire, ['jobs', 'list'], { cwd: app, env })
    expect(list.code, list.stderr).toBe(0)
    expect(JSON.parse(list.stdout).map((j: { job_id: string }) => j.job_id)).toEqual([job!.job_id])

    writeFileSync(path.join(app, 'invoice.pdf'), await invoicePdf())
    const waited = await sh(quire, ['submit', 'invoice.pdf', '--wait', '--timeout', '90'], { cwd: app, env })
    expect(waited.code, waited.stderr).toBe(0)
    const [{ job: done, fields }] = JSON.parse(waited.stdout)
    expect(done.status).toBe('completed')
    expect(fields).toHaveLength(1)
    const document = await sh(quire, ['documents', 'get', fields[0].document_id], { cwd: app, env })
    expect(JSON.parse(document.stdout)).toMatchObject({ id: fields[0].document_id, data: fields[0].data })

    // Exit 3: a job that ends failed (a damaged PDF is accepted and fails at initialization), printed all the same.
    writeFileSync(path.join(app, 'damaged.pdf'), `%PDF-1.7\n${'no objects here\n'.repeat(40)}`)
    const failed = await sh(quire, ['submit', 'damaged.pdf', '--wait', '--timeout', '90'], { cwd: app, env })
    expect(failed.code, failed.stderr).toBe(3)
    expect(JSON.parse(failed.stdout)[0].job.status).toBe('failed')
    // And a job still running at --timeout: a scanned page takes OCR seconds, the deadline is a millisecond.
    writeFileSync(path.join(app, 'scan.pdf'), await scannedPdf([['INVOICE INV-3', 'Total 12.00']]))
    const late = await sh(quire, ['submit', 'scan.pdf', '--wait', '--timeout', '0.001'], { cwd: app, env })
    expect(late).toMatchObject({ code: 3, stderr: expect.stringMatching(/at the deadline/) })

    const missing = await sh(quire, ['jobs', 'get', 'job_missing'], { cwd: app, env })
    expect(missing).toMatchObject({
      code: 1,
      stderr: expect.stringMatching(/404 job_not_found: .* \[request req_[0-9a-f]{32}\]/),
    })
    expect(await sh(quire, ['jobs', 'frobnicate'], { cwd: app, env })).toMatchObject({ code: 2 })
    expect(
      await sh(quire, ['jobs', 'list'], { cwd: app, env: { QUIRE_URL: ctx.stack.baseUrl, QUIRE_API_KEY: '' } }),
    ).toMatchObject({
      code: 2,
    })
  })
})

// The library entry resolves from the installed package, without the workspace's source condition.
const LIBRARY_CHECK = `
import { createClient, verifyFormA, verifyFormB } from '@quire/client'
console.log(typeof createClient, typeof verifyFormA, typeof verifyFormB)
`
