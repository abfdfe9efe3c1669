import { createHash, timingSafeEqual } from 'node:crypto'
import { authenticateApiKey } from '@quire/core'
import { DomainError, type Scope } from '@quire/domain'
import type { Middleware } from 'koa'
import type { AppDeps, AppState } from '../http/context.ts'

/** X-API-Key → the key's workspace, form and scopes. Every /v1 endpoint runs in that workspace. */
export function authenticate(deps: AppDeps): Middleware<AppState> {
  return async (ctx, next) => {
    const key = ctx.get('X-API-Key')
    if (!key) throw new DomainError('unauthorized', 'missing API key: send it in the X-API-Key header')
    const principal = await authenticateApiKey({ db: deps.db, key })
    if (!principal) throw new DomainError('unauthorized', 'invalid API key')
    ctx.state.principal = principal
    await next()
  }
}

/** Any one of the given scopes suffices (Form A and Form B name the webhook scope differently). */
export function requireScope(...scopes: Scope[]): Middleware<AppState> {
  return async (ctx, next) => {
    const have = ctx.state.principal.scopes
    if (!scopes.some((s) => have.includes(s))) {
      throw new DomainError('insufficient_scope', `this API key lacks the required scope ${scopes.join(' or ')}`)
    }
    await next()
  }
}

export function adminAuth(deps: AppDeps): Middleware {
  return async (ctx, next) => {
    const header = ctx.get('Authorization')
    const token = header.startsWith('Bearer ') ? header.slice(7) : ''
    if (!token || !timingSafeEqualString(token, deps.config.adminToken)) {
      throw new DomainError('unauthorized', 'invalid admin token')
    }
    await next()
  }
}

function timingSafeEqualString(a: string, b: string): boolean {
  const ha = createHash('sha256').update(a).digest()
  const hb = createHash('sha256').update(b).digest()
  return timingSafeEqual(ha, hb)
}
