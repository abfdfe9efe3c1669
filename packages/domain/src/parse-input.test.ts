import { describe, expect, it } from 'vitest'
import { isStorableText, LONE_SURROGATES, unstorableText } from './parse-input.ts'

describe('storable text', () => {
  it('refuses NUL and lone surrogates, and accepts well-formed pairs and U+FFFD', () => {
    expect(unstorableText('a\u0000b')).toBe('nul')
    expect(unstorableText('a\ud800b')).toBe('lone-surrogate')
    expect(unstorableText('a\udc00')).toBe('lone-surrogate')
    expect(unstorableText('\u0000\ud800')).toBe('nul')
    for (const ok of ['', 'plain', 'emoji \ud83d\ude00', '\uFFFD', 'ü']) expect(isStorableText(ok)).toBe(true)
    // The same answer on repeated calls (no lastIndex carried between them).
    expect([1, 2, 3].map(() => isStorableText('\ud800'))).toEqual([false, false, false])
  })

  it('LONE_SURROGATES replaces each lone half and leaves pairs whole', () => {
    expect('\ud800\ud800\udc00x\udc00'.replace(LONE_SURROGATES, '\uFFFD')).toBe('\uFFFD\ud800\udc00x\uFFFD')
  })
})
