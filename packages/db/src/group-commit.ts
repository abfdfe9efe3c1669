/**
 * How one kind of write goes to the database in groups: `writeGroup` writes several items in one statement (one
 * transaction, one commit) and answers each item in order; `writeOne` writes one alone. An answer may be a promise
 * (a read after the commit that explains it): its caller gets what it settles to, and the next group does not wait
 * for it.
 */
export type GroupWriter<Item, Answer> = {
  writeGroup(items: Item[]): Promise<Array<Answer | PromiseLike<Answer>>>
  writeOne(item: Item): Promise<Answer>
}

/** Most items one group carries unless told otherwise: a group holds its key's rows for all of them. */
export const DEFAULT_MAX_GROUP = 64

type Waiting<Item, Answer> = {
  item: Item
  resolve(answer: Answer | PromiseLike<Answer>): void
  reject(e: unknown): void
}

/**
 * Group commit per key (a workspace, whose balance row every write takes a turn on): the first item of a key is
 * written at once; the items that arrive while it is being written wait for it and then go together in one call of
 * `writeGroup`, and so on while more arrive. Each turn on the key's rows (the statement, its round trip, the row
 * locks, the commit and its WAL flush) then serves a group instead of one item, as a TigerBeetle client batches the
 * transfers its callers send at once. An item alone on its key waits for nothing.
 *
 * A caller's promise settles only after its group committed (or failed). A group that fails as a whole (a
 * connection lost, a statement timeout, a row one item got wrong) has rolled back entirely, so its items are written
 * again one call of `writeOne` each: no item's error becomes another's.
 */
export class GroupCommit<Item, Answer> {
  private readonly waiting = new Map<string, Waiting<Item, Answer>[]>()

  constructor(
    private readonly writer: GroupWriter<Item, Answer>,
    private readonly maxGroup = DEFAULT_MAX_GROUP,
  ) {}

  /** Writes `item` with the others of `key` that are waiting; answers once its group committed. */
  write(key: string, item: Item): Promise<Answer> {
    return new Promise((resolve, reject) => {
      const entry = { item, resolve, reject }
      const queue = this.waiting.get(key)
      if (queue) {
        queue.push(entry) // the key has a group being written: this goes with the next one
        return
      }
      this.waiting.set(key, [entry])
      void this.drain(key)
    })
  }

  /** Writes a key's waiting items, a group at a time, until none are left. Never rejects. */
  private async drain(key: string): Promise<void> {
    const queue = this.waiting.get(key)!
    while (queue.length > 0) await this.send(queue.splice(0, this.maxGroup))
    this.waiting.delete(key)
  }

  private async send(group: Waiting<Item, Answer>[]): Promise<void> {
    const alone = (w: Waiting<Item, Answer>) => this.writer.writeOne(w.item).then(w.resolve, w.reject)
    if (group.length === 1) return alone(group[0]!)
    let answers: Array<Answer | PromiseLike<Answer>>
    try {
      answers = await this.writer.writeGroup(group.map((w) => w.item))
      if (answers.length !== group.length) throw new Error(`a group of ${group.length} got ${answers.length} answers`)
    } catch {
      // Nothing of the group remains: each item goes again alone, so an item's own error stays its own.
      await Promise.all(group.map(alone))
      return
    }
    for (const [i, w] of group.entries()) w.resolve(answers[i]!)
  }
}
