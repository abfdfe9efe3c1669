import { useEffect, useRef, useState } from 'preact/hooks'
import { ApiError, createAdminClient, createClient } from './api-client.ts'

const refused = (e: unknown) => (e instanceof ApiError ? `${e.code}: ${e.message}` : String(e))

/**
 * Signs in with an API key holding documents:read and documents:review (both checked here, by the API's own
 * answers), or with the operator's admin token and a workspace, for which a desk key is issued. Only the key is kept
 * (sessionStorage); the admin token is used for the two calls and dropped.
 */
export function SignIn(props: { onSignedIn: (key: string) => void }) {
  const [mode, setMode] = useState<'key' | 'admin'>('key')
  const [key, setKey] = useState('')
  const [token, setToken] = useState('')
  const [workspace, setWorkspace] = useState('')
  const [error, setError] = useState<string | null>(null)
  const [busy, setBusy] = useState(false)
  const first = useRef<HTMLInputElement>(null)
  // The first field takes the focus, so a reviewer signs in by typing the key and Enter.
  useEffect(() => first.current?.focus(), [mode])

  const submit = async (ev: Event) => {
    ev.preventDefault()
    setBusy(true)
    setError(null)
    try {
      let deskKey = key.trim()
      if (mode === 'admin') {
        const admin = createAdminClient(token.trim())
        await admin.workspace(workspace.trim())
        deskKey = await admin.deskKey(workspace.trim())
      }
      const client = createClient(deskKey)
      await client.queue({})
      await client.canReview()
      props.onSignedIn(deskKey)
    } catch (e) {
      setError(refused(e))
    } finally {
      setBusy(false)
    }
  }

  return (
    <main class="sign-in">
      <h1>Quire review desk</h1>
      <form onSubmit={submit} aria-describedby={error ? 'sign-in-error' : undefined}>
        <fieldset>
          <legend>Sign in with</legend>
          <label>
            <input type="radio" name="mode" checked={mode === 'key'} onChange={() => setMode('key')} /> an API key
          </label>
          <label>
            <input type="radio" name="mode" checked={mode === 'admin'} onChange={() => setMode('admin')} /> the admin
            token and a workspace
          </label>
        </fieldset>
        {mode === 'key' ? (
          <label class="field">
            API key (needs documents:read and documents:review)
            <input
              id="api-key"
              type="password"
              autoComplete="off"
              value={key}
              onInput={(e) => setKey(e.currentTarget.value)}
              required
              ref={first}
            />
          </label>
        ) : (
          <>
            <label class="field">
              Admin token
              <input
                id="admin-token"
                ref={first}
                type="password"
                autoComplete="off"
                value={token}
                onInput={(e) => setToken(e.currentTarget.value)}
                required
              />
            </label>
            <label class="field">
              Workspace id
              <input
                id="workspace-id"
                value={workspace}
                onInput={(e) => setWorkspace(e.currentTarget.value)}
                required
              />
            </label>
          </>
        )}
        <button type="submit" disabled={busy}>
          Sign in
        </button>
        {error && (
          <p id="sign-in-error" class="notice error" role="alert">
            {error}
          </p>
        )}
      </form>
    </main>
  )
}
