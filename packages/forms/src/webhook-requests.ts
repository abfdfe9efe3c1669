import type { NewWebhook, WebhookAuth } from '@quire/core'
import { DomainError, parseInput } from '@quire/domain'
import { z } from 'zod'
import { FORM_A_EVENTS, FORM_B_EVENTS } from './webhook-events.ts'

const Headers = z.record(z.string().min(1).max(200), z.string().max(4000))

export const FormACreateWebhook = z.object({
  name: z.string().min(1).max(200).describe('Label, unique within the workspace (409 WEBHOOK_NAME_CONFLICT).'),
  url: z.string().min(1).max(2000).describe('HTTPS endpoint; private, loopback and link-local addresses are rejected.'),
  auth_type: z.enum(['NONE', 'API_KEY', 'BASIC']).describe('How the service authenticates to the receiver.'),
  auth: z
    .object({
      api_key: z.string().min(1).optional(),
      header_name: z.string().min(1).max(200).optional(),
      username: z.string().optional(),
      password: z.string().optional(),
    })
    .optional()
    .describe('For `API_KEY`: `api_key` and `header_name` (default `X-API-Key`). For `BASIC`: `username`, `password`.'),
  events: z.array(z.string()).optional().describe('Job events to receive in addition to stage bindings.'),
  headers: Headers.optional().describe(
    'Static headers sent with every delivery; names starting with `X-Service-` are reserved.',
  ),
  description: z.string().max(2000).optional().describe('Free text.'),
})

export const FormBCreateWebhook = z.object({
  name: z.string().min(1).max(200).describe('Human label, unique within the workspace (409 WEBHOOK_NAME_CONFLICT).'),
  url: z
    .string()
    .min(1)
    .max(2000)
    .describe('HTTPS endpoint; non-TLS, private, loopback and link-local addresses are rejected.'),
  events: z.array(z.string()).optional().describe('Event ids, or `["*"]` for all. Default: all.'),
  auth: z
    .enum(['none', 'basic', 'apikey'])
    .default('none')
    .describe('How the service authenticates to the receiver; add the matching `apikey` or `basic` block.'),
  apikey: z
    .object({ location: z.enum(['header']).default('header'), name: z.string().min(1), key: z.string().min(1) })
    .optional()
    .describe('For `auth: apikey`: `location` (header), header `name`, `key`.'),
  basic: z
    .object({ username: z.string().min(1), password: z.string() })
    .optional()
    .describe('For `auth: basic`: `username`, `password`.'),
  headers: Headers.optional().describe(
    'Static headers sent with every delivery; names starting with `X-Service-` are reserved.',
  ),
  description: z.string().max(2000).optional().describe('Free text.'),
})

function checkEvents(events: string[], allowed: string[]) {
  const bad = events.filter((e) => !allowed.includes(e))
  if (bad.length) throw new DomainError('INVALID_EVENT', `unknown events: ${bad.join(', ')}`, { allowed })
}

export function parseFormAWebhook(body: unknown): NewWebhook {
  const b = parseInput(FormACreateWebhook, body)
  let auth: WebhookAuth = { type: 'none' }
  if (b.auth_type === 'API_KEY') {
    if (!b.auth?.api_key) throw new DomainError('INVALID_PARAMETER', 'auth.api_key is required for auth_type API_KEY')
    auth = { type: 'api_key', key: b.auth.api_key, headerName: b.auth.header_name ?? 'X-API-Key' }
  } else if (b.auth_type === 'BASIC') {
    if (!b.auth?.username) throw new DomainError('INVALID_PARAMETER', 'auth.username is required for auth_type BASIC')
    auth = { type: 'basic', username: b.auth.username, password: b.auth.password ?? '' }
  }
  const events = b.events ?? []
  checkEvents(events, FORM_A_EVENTS)
  return { name: b.name, url: b.url, auth, events, headers: b.headers ?? {}, description: b.description ?? null }
}

export function parseFormBWebhook(body: unknown): NewWebhook {
  const b = parseInput(FormBCreateWebhook, body)
  let auth: WebhookAuth = { type: 'none' }
  if (b.auth === 'apikey') {
    if (!b.apikey) throw new DomainError('INVALID_PARAMETER', 'the apikey block is required for auth apikey')
    auth = { type: 'api_key', key: b.apikey.key, headerName: b.apikey.name, location: b.apikey.location }
  } else if (b.auth === 'basic') {
    if (!b.basic) throw new DomainError('INVALID_PARAMETER', 'the basic block is required for auth basic')
    auth = { type: 'basic', username: b.basic.username, password: b.basic.password }
  }
  const events = b.events ?? ['*']
  checkEvents(events, [...FORM_B_EVENTS, '*'])
  return { name: b.name, url: b.url, auth, events, headers: b.headers ?? {}, description: b.description ?? null }
}
