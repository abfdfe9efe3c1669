import { describe, expect, it } from 'vitest'
import { GroupCommit, type GroupWriter } from './group-commit.ts'

/** A writer that records the calls it gets; each write waits until the test lets it finish. */
function recordingWriter(opts: { failGroupsWith?: (items: number[]) => boolean; failOne?: (item: number) => boolean }) {
  const calls: { kind: 'group' | 'one'; items: number[] }[] = []
  const pending: (() => void)[] = []
  const wait = () => new Promise<void>((resolve) => pending.push(resolve))
  const writer: GroupWriter<number, string> = {
    async writeGroup(items) {
      calls.push({ kind: 'group', items })
      await wait()
      if (opts.failGroupsWith?.(items)) throw new Error('the group failed')
      return items.map((i) => (i === 7 ? Promise.resolve(`explained ${i}`) : `group ${i}`))
    },
    async writeOne(item) {
      calls.push({ kind: 'one', items: [item] })
      await wait()
      if (opts.failOne?.(item)) throw new Error(`item ${item} failed`)
      return `one ${item}`
    },
  }
  const release = async () => {
    while (pending.length > 0) pending.shift()!()
    await new Promise((resolve) => setTimeout(resolve, 0))
  }
  return { writer, calls, release }
}

describe('GroupCommit', () => {
  it('writes the first item of a key at once and those arriving meanwhile as one group, in order', async () => {
    const { writer, calls, release } = recordingWriter({})
    const groups = new GroupCommit(writer)
    const first = groups.write('ws_a', 1)
    const rest = [2, 3, 4].map((i) => groups.write('ws_a', i))
    expect(calls).toEqual([{ kind: 'one', items: [1] }])
    await release()
    expect(calls[1]).toEqual({ kind: 'group', items: [2, 3, 4] })
    await release()
    expect(await first).toBe('one 1')
    expect(await Promise.all(rest)).toEqual(['group 2', 'group 3', 'group 4'])
  })

  it('keeps keys apart: another key does not wait for a group under way', async () => {
    const { writer, calls, release } = recordingWriter({})
    const groups = new GroupCommit(writer)
    const a = groups.write('ws_a', 1)
    const b = groups.write('ws_b', 2)
    expect(calls).toEqual([
      { kind: 'one', items: [1] },
      { kind: 'one', items: [2] },
    ])
    await release()
    expect(await Promise.all([a, b])).toEqual(['one 1', 'one 2'])
  })

  it('caps a group at maxGroup items; the rest go in the next group', async () => {
    const { writer, calls, release } = recordingWriter({})
    const groups = new GroupCommit(writer, 2)
    const all = [1, 2, 3, 4, 5, 6].map((i) => groups.write('ws_a', i))
    for (let i = 0; i < 4; i++) await release()
    expect(calls.map((c) => c.items)).toEqual([[1], [2, 3], [4, 5], [6]])
    expect(await Promise.all(all)).toEqual(['one 1', 'group 2', 'group 3', 'group 4', 'group 5', 'one 6'])
  })

  it('settles an item with the promise its answer is (a read after the commit)', async () => {
    const { writer, release } = recordingWriter({})
    const groups = new GroupCommit(writer)
    void groups.write('ws_a', 1)
    const explained = groups.write('ws_a', 7)
    const plain = groups.write('ws_a', 8)
    await release()
    await release()
    expect(await explained).toBe('explained 7')
    expect(await plain).toBe('group 8')
  })

  it('writes a failed group again item by item, so one item’s error stays its own', async () => {
    const { writer, calls, release } = recordingWriter({ failGroupsWith: () => true, failOne: (i) => i === 3 })
    const groups = new GroupCommit(writer)
    const first = groups.write('ws_a', 1)
    const rest = Promise.allSettled([2, 3, 4].map((i) => groups.write('ws_a', i)))
    for (let i = 0; i < 3; i++) await release()
    expect(calls.map((c) => `${c.kind} ${c.items.join(',')}`)).toEqual([
      'one 1',
      'group 2,3,4',
      'one 2',
      'one 3',
      'one 4',
    ])
    expect(await first).toBe('one 1')
    expect((await rest).map((s) => (s.status === 'fulfilled' ? s.value : (s.reason as Error).message))).toEqual([
      'one 2',
      'item 3 failed',
      'one 4',
    ])
  })

  it('treats a group answered with the wrong number of answers as failed', async () => {
    const writer: GroupWriter<number, string> = {
      writeGroup: async (items) => items.slice(1).map(String),
      writeOne: async (item) => `one ${item}`,
    }
    const groups = new GroupCommit(writer)
    const all = [1, 2, 3].map((i) => groups.write('ws_a', i))
    expect(await Promise.all(all)).toEqual(['one 1', 'one 2', 'one 3'])
  })
})
