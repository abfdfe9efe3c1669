#!/usr/bin/env node
import { parseArgs } from 'node:util'
import { createClient, detectForm } from './client.ts'
import { QuireApiError, QuireTimeoutError } from './errors.ts'
import type { WaitOptions } from './polling.ts'
import type { FormAClient } from './form-a-client.ts'
import type { FormBClient } from './form-b-client.ts'

const HELP = `Usage: quire [--form A|B] [--url URL] [--api-key KEY] COMMAND

Commands:
  submit FILE... [--pipeline ID] [--wait] [--timeout SECONDS]
                      submit files (Form A: one job; Form B: one job per file) and print the job(s);
                      with --wait, wait until final and print the extracted fields too
  jobs list [--limit N] [--all]
                      print the newest jobs (one page, or every page with --all)
  jobs get ID         print one job
  documents get ID    print one document, its fields included

Environment: QUIRE_URL (default http://127.0.0.1:3000), QUIRE_API_KEY, QUIRE_FORM.
Without --form / QUIRE_FORM the form is read from the key's OpenAPI document.
Exit codes: 0 ok, 1 API error, 2 usage error, 3 job failed, cancelled or timed out (--wait).
`

const EXIT = { ok: 0, api: 1, usage: 2, job: 3 } as const

class UsageError extends Error {}

const OPTIONS = {
  form: { type: 'string' },
  url: { type: 'string' },
  'api-key': { type: 'string' },
  pipeline: { type: 'string' },
  wait: { type: 'boolean' },
  timeout: { type: 'string' },
  limit: { type: 'string' },
  all: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
} as const

type Options = ReturnType<typeof parseArgs<{ options: typeof OPTIONS; allowPositionals: true }>>['values']
type Client = FormAClient | FormBClient

/** Prints JSON for scripts (`| jq`) and answers exit code 0. */
function print(value: unknown): number {
  process.stdout.write(`${JSON.stringify(value, null, 2)}\n`)
  return EXIT.ok
}

function positiveNumber(text: string | undefined, name: string, fallback: number): number {
  if (text === undefined) return fallback
  const n = Number(text)
  if (!Number.isFinite(n) || n <= 0) throw new UsageError(`--${name} must be a positive number`)
  return n
}

/** How each form submits from the command line: the only place the CLI tells the forms apart. */
const SUBMIT = {
  /** Form A: one job of all the files, under a published pipeline. */
  async A(client: FormAClient, files: string[], opts: Options, wait: WaitOptions) {
    if (!opts.pipeline) throw new UsageError('Form A needs --pipeline ID (a published pipeline)')
    const created = await client.submit(files, { pipeline_id: opts.pipeline })
    if (!opts.wait) return print(created)
    const job = await client.waitForJob(created.id, wait)
    print({ job, fields: await client.jobFields(job.id) })
    return job.status === 'completed' ? EXIT.ok : EXIT.job
  },
  /** Form B: one job per file, the workspace's default pipeline unless named. */
  async B(client: FormBClient, files: string[], opts: Options, wait: WaitOptions) {
    const params = opts.pipeline ? { pipeline_id: opts.pipeline } : {}
    if (!opts.wait) return print(await client.submit(files, params))
    const jobs = await client.submitAndWait(files, params, wait)
    print(await Promise.all(jobs.map(async (job) => ({ job, fields: await client.jobFields(job.job_id) }))))
    return jobs.every((job) => job.status === 'completed') ? EXIT.ok : EXIT.job
  },
}

async function submit(client: Client, files: string[], opts: Options): Promise<number> {
  if (files.length === 0) throw new UsageError('submit needs at least one FILE')
  const wait = { timeoutMs: positiveNumber(opts.timeout, 'timeout', 600) * 1000 }
  // The form picks the entry; TypeScript cannot tie `client.form` to the client's class, hence the cast.
  return SUBMIT[client.form](client as FormAClient & FormBClient, files, opts, wait)
}

async function listJobs(client: Client, opts: Options): Promise<number> {
  const limit = positiveNumber(opts.limit, 'limit', 25)
  const jobs: unknown[] = []
  for await (const job of client.jobs({ limit: Math.min(limit, 100) })) {
    jobs.push(job)
    if (!opts.all && jobs.length >= limit) break
  }
  return print(jobs)
}

async function run(argv: string[]): Promise<number> {
  const { values: opts, positionals } = parseArgs({ args: argv, options: OPTIONS, allowPositionals: true })
  const [command, ...rest] = positionals
  if (opts.help || !command) {
    process.stdout.write(HELP)
    return opts.help ? EXIT.ok : EXIT.usage
  }
  const apiKey = opts['api-key'] ?? process.env.QUIRE_API_KEY
  if (!apiKey) throw new UsageError('set QUIRE_API_KEY or pass --api-key')
  const baseUrl = opts.url ?? process.env.QUIRE_URL ?? 'http://127.0.0.1:3000'
  const form = (opts.form ?? process.env.QUIRE_FORM)?.toUpperCase()
  if (form !== undefined && form !== 'A' && form !== 'B') throw new UsageError('--form must be A or B')
  const client = createClient({ form: form ?? (await detectForm({ baseUrl, apiKey })), baseUrl, apiKey })

  const [sub, id, ...extra] = rest
  if (command === 'submit') return submit(client, rest, opts)
  if (command === 'jobs' && sub === 'list' && !id) return listJobs(client, opts)
  if (command === 'jobs' && sub === 'get' && id && extra.length === 0) return print(await client.getJob(id))
  if (command === 'documents' && sub === 'get' && id && extra.length === 0) return print(await client.getDocument(id))
  throw new UsageError(`unknown command: ${positionals.join(' ')}`)
}

try {
  process.exitCode = await run(process.argv.slice(2))
} catch (error) {
  const usage = error instanceof UsageError || (error as { code?: string }).code?.startsWith('ERR_PARSE_ARGS')
  // fetch hides why a connection failed in `cause` (ECONNREFUSED, a certificate, ...).
  const cause = (error as { cause?: { message?: string } }).cause?.message
  const requestId = error instanceof QuireApiError && error.requestId ? ` [request ${error.requestId}]` : ''
  const message = `${(error as Error).message}${cause ? ` (${cause})` : ''}${requestId}`
  process.stderr.write(`quire: ${message}\n${usage ? 'Run quire --help for usage.\n' : ''}`)
  // API errors and unreachable servers are 1; a job still running at --timeout is 3 like a failed one.
  process.exitCode = usage ? EXIT.usage : error instanceof QuireTimeoutError ? EXIT.job : EXIT.api
}
