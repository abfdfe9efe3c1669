import { ephemeralSecretBox } from '@quire/secrets'
import { describe, expect, it, vi } from 'vitest'
import { rememberOpened } from './remember-opened.ts'

describe('rememberOpened', () => {
  it('opens each sealed value once and answers the same plaintext afterwards', () => {
    const box = ephemeralSecretBox()
    const open = vi.fn((s: string) => box.open(s))
    const remembered = rememberOpened({ open })
    const a = box.seal('secret-a')
    const b = box.seal('secret-b')
    expect([remembered.open(a), remembered.open(a), remembered.open(b), remembered.open(a)]).toEqual([
      'secret-a',
      'secret-a',
      'secret-b',
      'secret-a',
    ])
    expect(open).toHaveBeenCalledTimes(2)
  })

  it('a value sealed again (rotation) is another value, opened anew', () => {
    const box = ephemeralSecretBox()
    const open = vi.fn((s: string) => box.open(s))
    const remembered = rememberOpened({ open })
    remembered.open(box.seal('same'))
    expect(remembered.open(box.seal('same'))).toBe('same')
    expect(open).toHaveBeenCalledTimes(2)
  })

  it('does not remember a failure, and keeps at most `max` values', () => {
    let fail = true
    const open = vi.fn((s: string) => {
      if (fail) throw new Error('cannot open')
      return s.toUpperCase()
    })
    const remembered = rememberOpened({ open }, 2)
    expect(() => remembered.open('v1:x')).toThrow('cannot open')
    fail = false
    expect(remembered.open('v1:x')).toBe('V1:X')
    remembered.open('v1:y')
    remembered.open('v1:z') // evicts v1:x, the oldest
    remembered.open('v1:x')
    expect(open.mock.calls.map((c) => c[0])).toEqual(['v1:x', 'v1:x', 'v1:y', 'v1:z', 'v1:x'])
  })
})
