import { rm } from 'node:fs/promises'
import { mkdirSync } from 'node:fs'
import path from 'node:path'
import { koaBody } from 'koa-body'
import type { File } from 'formidable'
import type { Middleware } from 'koa'
import { PLATFORM_MAX_FILE_MB } from '@quire/domain'
import type { UploadedFile } from '@quire/core'
import type { AppDeps } from './context.ts'

const MB = 1024 * 1024

/**
 * Streams multipart parts to temporary files (never whole into memory) with the platform limits, and removes every
 * temporary file the request created once the response is decided — moved files are gone already, partial ones
 * from an aborted upload are not left behind.
 */
export function multipartBody(deps: AppDeps): Middleware {
  const uploadDir = path.resolve(deps.config.uploadDir)
  mkdirSync(uploadDir, { recursive: true })
  const maxFileSize = PLATFORM_MAX_FILE_MB * MB
  return async (ctx, next) => {
    const temps: string[] = []
    const parse = koaBody({
      multipart: true,
      urlencoded: false,
      text: false,
      json: true,
      jsonLimit: '1mb',
      formidable: {
        uploadDir,
        maxFileSize,
        maxTotalFileSize: maxFileSize * deps.config.maxFilesPerRequest,
        maxFiles: deps.config.maxFilesPerRequest,
        maxFields: 200,
        maxFieldsSize: 2 * MB,
        allowEmptyFiles: true,
        minFileSize: 0,
        onFileBegin: (_name: string, file: File) => {
          temps.push(file.filepath)
        },
      },
    })
    try {
      await parse(ctx, next)
    } finally {
      await Promise.all(temps.map((t) => rm(t, { force: true })))
    }
  }
}

/** koa-body gives a single File or an array; callers always get an array. */
export function filesOf(ctx: { request: { files?: Record<string, File | File[]> } }, field: string): File[] {
  const v = ctx.request.files?.[field]
  return v ? (Array.isArray(v) ? v : [v]) : []
}

export const toUploaded = (f: File): UploadedFile => ({
  tempPath: f.filepath,
  fileName: sanitiseFileName(f.originalFilename ?? ''),
  sizeBytes: f.size,
})

/** Keeps the last path segment and drops control characters, so a name can be echoed safely. */
export function sanitiseFileName(raw: string): string {
  const base = raw.split(/[\\/]/).pop() ?? ''
  return base.replace(/[\u0000-\u001f\u007f]/g, '').slice(0, 255) || 'upload'
}

/** Text fields as one record of strings (a repeated field keeps its first value). */
export function fieldsOf(ctx: { request: { body?: unknown } }): Record<string, string | string[]> {
  const b = ctx.request.body
  return b && typeof b === 'object' && !Array.isArray(b) ? (b as Record<string, string | string[]>) : {}
}
