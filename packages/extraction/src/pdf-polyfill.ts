/**
 * pdf.js (inside unpdf 1.7) calls ArrayBuffer.prototype.transferToFixedLength while building
 * operator lists; Node 20 lacks it and text pages then render blank. Imported for its side
 * effect before unpdf is used (STACK-NOTES §7e).
 */
type WithTransfer = { transferToFixedLength?: (length?: number) => ArrayBuffer }

if (!(ArrayBuffer.prototype as WithTransfer).transferToFixedLength) {
  Object.defineProperty(ArrayBuffer.prototype, 'transferToFixedLength', {
    configurable: true,
    writable: true,
    value(this: ArrayBuffer, length: number = this.byteLength): ArrayBuffer {
      const copy = new ArrayBuffer(length)
      new Uint8Array(copy).set(new Uint8Array(this, 0, Math.min(length, this.byteLength)))
      return copy
    },
  })
}

/**
 * pdf.js reading by ranges (PDFDataRangeTransport) calls iterator helpers (`set.keys().find`, `.values().some`),
 * which Node 22 has and Node 20 lacks; the standard semantics, added only where missing.
 */
type IteratorHelpers = {
  find?: (fn: (v: unknown, i: number) => unknown) => unknown
  some?: (fn: (v: unknown, i: number) => unknown) => boolean
}
const iteratorPrototype = Object.getPrototypeOf(Object.getPrototypeOf([][Symbol.iterator]())) as IteratorHelpers
if (!iteratorPrototype.find) {
  Object.defineProperty(iteratorPrototype, 'find', {
    configurable: true,
    writable: true,
    value(this: Iterable<unknown>, fn: (v: unknown, i: number) => unknown) {
      let i = 0
      for (const v of this) if (fn(v, i++)) return v
      return undefined
    },
  })
}
if (!iteratorPrototype.some) {
  Object.defineProperty(iteratorPrototype, 'some', {
    configurable: true,
    writable: true,
    value(this: Iterable<unknown>, fn: (v: unknown, i: number) => unknown) {
      let i = 0
      for (const v of this) if (fn(v, i++)) return true
      return false
    },
  })
}

export {}
