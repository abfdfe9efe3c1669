import type { WebhookAuth } from './webhook-headers.policy.ts'

/**
 * The credential fields of a webhook's `auth` (basic password, api_key value) go through a secret box
 * (@quire/secrets) before they are stored and after they are read; everything else (type, username, header name,
 * location) stays readable for presenters. Typed by shape so this package does not depend on the box.
 */
type Transform = (value: string) => string

function mapCredential<A extends WebhookAuth>(auth: A, f: Transform): A {
  switch (auth.type) {
    case 'none':
      return auth
    case 'api_key':
      return { ...auth, key: f(auth.key) }
    case 'basic':
      return { ...auth, password: f(auth.password) }
  }
  return auth
}

export const sealWebhookAuth = <A extends WebhookAuth>(auth: A, box: { seal: Transform }): A =>
  mapCredential(auth, (v) => box.seal(v))

export const openWebhookAuth = <A extends WebhookAuth>(auth: A, box: { open: Transform }): A =>
  mapCredential(auth, (v) => box.open(v))

/** Every credential in `auth` is sealed with the box's current key (`secrets:rotate` leaves it alone). */
export function webhookAuthIsCurrent(auth: WebhookAuth, box: { isCurrent: (value: string) => boolean }): boolean {
  if (auth.type === 'api_key') return box.isCurrent(auth.key)
  if (auth.type === 'basic') return box.isCurrent(auth.password)
  return true
}
