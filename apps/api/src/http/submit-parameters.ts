/**
 * The parameters a multipart body accepts (derived from the route declaration by `acceptedParameters`). Anything
 * else in a multipart submission is answered 400 UNKNOWN_PARAMETER, so a misspelt parameter is never silently ignored.
 */
export type SubmitParameters = {
  /** The repeatable file field. */
  fileField: string
  /** Text form fields. */
  text: readonly string[]
  /** Query-string parameters (Form B also takes its text parameters there). */
  query: readonly string[]
}

export type ReceivedNames = { text: readonly string[]; files: readonly string[]; query: readonly string[] }

/**
 * The names a submission carries that its form does not accept, each once, in order of appearance (text fields,
 * file parts, query). Empty when the request has no part of the form's file field at all: that request is answered
 * by the route's 400 MISSING_PART (spec: "No `files` field (for example sent as `file`)"), whatever else it holds.
 */
export function unknownParameters(accepted: SubmitParameters, got: ReceivedNames): string[] {
  if (!got.files.includes(accepted.fileField)) return []
  const out = new Set<string>()
  for (const n of got.text) if (!accepted.text.includes(n)) out.add(n)
  for (const n of got.files) if (n !== accepted.fileField) out.add(n)
  for (const n of got.query) if (!accepted.query.includes(n)) out.add(n)
  return [...out]
}

/** A short, safe rendering of client-chosen names for an error message. */
export function describeNames(names: readonly string[], max = 10): string {
  const shown = names.slice(0, max).map((n) => JSON.stringify(n.length > 64 ? `${n.slice(0, 64)}…` : n))
  return shown.join(', ') + (names.length > max ? ` and ${names.length - max} more` : '')
}
