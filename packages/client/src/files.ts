import { openAsBlob } from 'node:fs'
import { basename } from 'node:path'
import type { Readable } from 'node:stream'

/** A file to upload: a path, bytes, a stream, a Blob, or any of them with a file name. */
export type FileSource = string | Uint8Array | Readable | Blob
export type FileInput = FileSource | { data: FileSource; name: string }

/**
 * Turns an input into a named Blob for a multipart part. Paths are read lazily by fetch (openAsBlob); streams are
 * read into memory first, because the server sniffs the type from the content and the file needs a known length.
 */
export async function toNamedBlob(input: FileInput, index: number): Promise<{ blob: Blob; name: string }> {
  const { data, name } = typeof input === 'object' && 'data' in input ? input : { data: input, name: undefined }
  if (typeof data === 'string') return { blob: await openAsBlob(data), name: name ?? basename(data) }
  const fallback = name ?? `file-${index + 1}`
  if (data instanceof Blob) return { blob: data, name: name ?? (data as File).name ?? fallback }
  if (data instanceof Uint8Array) return { blob: new Blob([data as Uint8Array<ArrayBuffer>]), name: fallback }
  const chunks: Uint8Array<ArrayBuffer>[] = []
  for await (const chunk of data) chunks.push(new Uint8Array(Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk)))
  return { blob: new Blob(chunks), name: fallback }
}

/** A multipart body: each file under `field`, then the text parameters that are set. */
export async function multipart(
  field: string,
  files: readonly FileInput[],
  params: Record<string, string | undefined>,
): Promise<FormData> {
  if (files.length === 0) throw new TypeError('submit needs at least one file')
  const form = new FormData()
  for (const [key, value] of Object.entries(params)) if (value !== undefined) form.append(key, value)
  for (const [i, file] of files.entries()) {
    const { blob, name } = await toNamedBlob(file, i)
    form.append(field, blob, name)
  }
  return form
}
