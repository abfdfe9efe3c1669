import { open, type FileHandle } from 'node:fs/promises'
import { inflateRawSync } from 'node:zlib'

const EOCD_SIGNATURE = 0x06054b50
const ZIP64_LOCATOR_SIGNATURE = 0x07064b50
const ZIP64_EOCD_SIGNATURE = 0x06064b50
const CENTRAL_SIGNATURE = 0x02014b50
const LOCAL_SIGNATURE = 0x04034b50
const MAX_EOCD_SEARCH = 22 + 0xffff

async function readAt(handle: FileHandle, position: number, length: number): Promise<Buffer> {
  const buffer = Buffer.alloc(length)
  const { bytesRead } = await handle.read(buffer, 0, length, position)
  return bytesRead === length ? buffer : buffer.subarray(0, bytesRead)
}

type CentralDirectory = { offset: number; size: number }

async function findCentralDirectory(handle: FileHandle, fileSize: number): Promise<CentralDirectory | null> {
  const tailLength = Math.min(fileSize, MAX_EOCD_SEARCH)
  const tailStart = fileSize - tailLength
  const tail = await readAt(handle, tailStart, tailLength)
  for (let i = tail.length - 22; i >= 0; i--) {
    if (tail.readUInt32LE(i) !== EOCD_SIGNATURE) continue
    let size = tail.readUInt32LE(i + 12)
    let offset = tail.readUInt32LE(i + 16)
    if (offset === 0xffffffff || size === 0xffffffff) {
      // ZIP64: the locator sits just before the classic end record.
      const locatorAt = tailStart + i - 20
      if (locatorAt < 0) return null
      const locator = await readAt(handle, locatorAt, 20)
      if (locator.readUInt32LE(0) !== ZIP64_LOCATOR_SIGNATURE) return null
      const zip64At = Number(locator.readBigUInt64LE(8))
      const zip64 = await readAt(handle, zip64At, 56)
      if (zip64.length < 56 || zip64.readUInt32LE(0) !== ZIP64_EOCD_SIGNATURE) return null
      size = Number(zip64.readBigUInt64LE(40))
      offset = Number(zip64.readBigUInt64LE(48))
    }
    if (offset + size > fileSize) return null
    return { offset, size }
  }
  return null
}

export type ZipEntry = {
  name: string
  /** 0 stored, 8 deflate. */
  method: number
  compressedSize: number
  /** As the archive declares it: never trusted for limits, only an upper hint. */
  declaredSize: number
  localOffset: number
}

/**
 * The entries of a ZIP file from its central directory (ZIP64 sizes and offsets included), reading nothing else.
 * Throws when the file is not a readable ZIP.
 */
export async function listZipEntries(path: string): Promise<ZipEntry[]> {
  const handle = await open(path, 'r')
  try {
    const { size: fileSize } = await handle.stat()
    const directory = await findCentralDirectory(handle, fileSize)
    if (!directory || directory.size > 64 * 1024 * 1024) throw new Error('no readable ZIP central directory')
    const central = await readAt(handle, directory.offset, directory.size)
    const entries: ZipEntry[] = []
    let p = 0
    while (p + 46 <= central.length && central.readUInt32LE(p) === CENTRAL_SIGNATURE) {
      const method = central.readUInt16LE(p + 10)
      let compressedSize = central.readUInt32LE(p + 20)
      let declaredSize = central.readUInt32LE(p + 24)
      const nameLength = central.readUInt16LE(p + 28)
      const extraLength = central.readUInt16LE(p + 30)
      const commentLength = central.readUInt16LE(p + 32)
      let localOffset = central.readUInt32LE(p + 42)
      const name = central.toString('utf8', p + 46, p + 46 + nameLength)
      if (compressedSize === 0xffffffff || declaredSize === 0xffffffff || localOffset === 0xffffffff) {
        // ZIP64 extended information extra field (id 0x0001): the 64-bit values, in this order, for those set.
        const extra = central.subarray(p + 46 + nameLength, p + 46 + nameLength + extraLength)
        let e = 0
        while (e + 4 <= extra.length) {
          const id = extra.readUInt16LE(e)
          const len = extra.readUInt16LE(e + 2)
          if (id === 0x0001) {
            let q = e + 4
            if (declaredSize === 0xffffffff) {
              declaredSize = Number(extra.readBigUInt64LE(q))
              q += 8
            }
            if (compressedSize === 0xffffffff) {
              compressedSize = Number(extra.readBigUInt64LE(q))
              q += 8
            }
            if (localOffset === 0xffffffff) localOffset = Number(extra.readBigUInt64LE(q))
            break
          }
          e += 4 + len
        }
      }
      if (localOffset + compressedSize > fileSize) throw new Error(`entry ${name} lies outside the file`)
      entries.push({ name, method, compressedSize, declaredSize, localOffset })
      p += 46 + nameLength + extraLength + commentLength
    }
    return entries
  } finally {
    await handle.close()
  }
}

/**
 * Reads one entry of a ZIP file (e.g. `docProps/app.xml` of a DOCX) without loading the rest:
 * the end record, the central directory and that entry's bytes only.
 * Returns null when the file is not a readable ZIP, the entry is absent, or it inflates past maxBytes.
 */
export async function readZipEntry(
  path: string,
  entryName: string,
  maxBytes = 4 * 1024 * 1024,
): Promise<Buffer | null> {
  const entries = await listZipEntries(path).catch(() => null)
  const entry = entries?.find((e) => e.name === entryName)
  if (!entry || entry.compressedSize > maxBytes * 20) return null
  const handle = await open(path, 'r')
  try {
    const local = await readAt(handle, entry.localOffset, 30)
    if (local.length < 30 || local.readUInt32LE(0) !== LOCAL_SIGNATURE) return null
    const dataAt = entry.localOffset + 30 + local.readUInt16LE(26) + local.readUInt16LE(28)
    const data = await readAt(handle, dataAt, entry.compressedSize)
    if (entry.method === 0) return data.length <= maxBytes ? data : null
    if (entry.method !== 8) return null
    try {
      return inflateRawSync(data, { maxOutputLength: maxBytes })
    } catch {
      return null
    }
  } finally {
    await handle.close()
  }
}
