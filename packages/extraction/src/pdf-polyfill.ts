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

export {}
