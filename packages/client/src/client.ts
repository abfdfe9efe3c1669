import { QuireApiError } from './errors.ts'
import { FormAClient } from './form-a-client.ts'
import { FormBClient } from './form-b-client.ts'
import type { ClientOptions } from './transport.ts'

export type CreateClientOptions = ClientOptions & {
  /** The API form of the key's workspace; it decides every shape (see `detectForm`). */
  form: 'A' | 'B'
}

/** A client typed for the key's form: `createClient({form: 'B', baseUrl, apiKey})`. */
export function createClient(options: ClientOptions & { form: 'A' }): FormAClient
export function createClient(options: ClientOptions & { form: 'B' }): FormBClient
export function createClient(options: CreateClientOptions): FormAClient | FormBClient
export function createClient(options: CreateClientOptions): FormAClient | FormBClient {
  if (options.form === 'A') return new FormAClient(options)
  if (options.form === 'B') return new FormBClient(options)
  throw new TypeError(`form must be 'A' or 'B', got ${String(options.form)}`)
}

/**
 * The form of the key's workspace, read from the OpenAPI document the API serves for it (`GET /v1/openapi.json`
 * answers the calling key's form), for callers such as the CLI that are given only a key.
 */
export async function detectForm({ baseUrl, apiKey, fetch: f = fetch }: ClientOptions): Promise<'A' | 'B'> {
  const response = await f(`${baseUrl.replace(/\/+$/, '')}/v1/openapi.json`, { headers: { 'X-API-Key': apiKey } })
  const body = (await response.json().catch(() => null)) as { info?: { title?: string } } | null
  if (!response.ok) throw QuireApiError.from(response, body)
  // The document's title names its form: "Quire API (Form A)".
  const form = /\(Form ([AB])\)/.exec(body?.info?.title ?? '')?.[1]
  if (form === 'A' || form === 'B') return form
  throw new Error('could not tell the API form from the served OpenAPI document; pass --form A|B')
}
