import createFetchClient, { type Client } from 'openapi-fetch'
import { QuireApiError } from './errors.ts'

export type ClientOptions = {
  /** The deployment's base URL, e.g. `https://quire.example.com` (no `/v1`). */
  baseUrl: string
  /** The workspace API key, sent as `X-API-Key`. */
  apiKey: string
  /** A fetch to use instead of the global one (proxies, tests). */
  fetch?: typeof fetch
}

/** An openapi-fetch client for one form's paths, sending the key on every request. */
export function createTransport<Paths extends {}>({ baseUrl, apiKey, fetch }: ClientOptions): Client<Paths> {
  return createFetchClient<Paths>({
    baseUrl: baseUrl.replace(/\/+$/, ''),
    headers: { 'X-API-Key': apiKey },
    ...(fetch ? { fetch } : {}),
  })
}

type FetchResult<T> = { data?: T; error?: unknown; response: Response }

/** The data of a 2xx answer; any other answer becomes a QuireApiError. */
export function unwrap<T>({ data, error, response }: FetchResult<T>): T {
  if (!response.ok) throw QuireApiError.from(response, error)
  return data as T
}
