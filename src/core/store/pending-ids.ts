// The pending patch ids of a run (what waits for review), as the listing counts them. pending.json
// keeps them one a line. A writer opening a run needs their count and the few ids that the journal
// after the file moves, not a Set of 10,000 strings (hashing them takes ~10 ms in a process that
// just started, on the resume's path). So the ids stay the file's text until they are looked up
// often: until then a lookup searches the text, and the ids added or removed since are kept aside.

/** Lookups answered from the text before the ids become a Set. */
const TEXT_LOOKUPS = 256;

export class PendingIds {
  private set: Set<string> | null = null;
  /** The file's ids, each between two line breaks (`\n` when none), while there is no Set. */
  private text = '\n';
  private inText = 0;
  private readonly added = new Set<string>();
  private readonly removed = new Set<string>();
  private lookups = 0;

  /** The ids `ids`; with `lines`, those of a file's text (one a line; `count` of them when the file says) instead. */
  constructor(ids: Iterable<string> = [], lines?: string, count?: number) {
    if (lines === undefined || lines === '') {
      this.set = new Set(ids);
      return;
    }
    this.text = `\n${lines}\n`;
    if (count !== undefined) this.inText = count;
    // An empty line is no id: such a text is read the slow way.
    else if (this.text.includes('\n\n')) this.toSet();
    // One more line break than ids.
    else for (let at = this.text.indexOf('\n', 1); at >= 0; at = this.text.indexOf('\n', at + 1)) this.inText++;
  }

  get size(): number {
    return this.set ? this.set.size : this.inText - this.removed.size + this.added.size;
  }

  has(id: string): boolean {
    if (this.set) return this.set.has(id);
    if (this.added.has(id)) return true;
    if (this.removed.has(id) || id === '' || id.includes('\n')) return false;
    if (++this.lookups > TEXT_LOOKUPS) return this.toSet().has(id);
    return this.text.includes(`\n${id}\n`);
  }

  /**
   * The id became pending (`pending`) or stopped being so. Trusted: the caller knows it was not,
   * or was, pending (a lookup, or a pending.json line of moves), so nothing is looked up.
   */
  move(id: string, pending: boolean): void {
    if (this.set) {
      if (pending) this.set.add(id);
      else this.set.delete(id);
    } else if (pending) {
      if (!this.removed.delete(id)) this.added.add(id);
    } else if (!this.added.delete(id)) this.removed.add(id);
  }

  /** The ids one a line, as pending.json holds them; null when one cannot be written so (empty, or holding a line break). */
  lines(): string | null {
    const ids = this.set ?? this.added;
    for (const id of ids) if (id === '' || id.includes('\n')) return null;
    if (this.set) return [...this.set].join('\n');
    const kept = this.removed.size === 0 ? [this.text.slice(1, -1)] : this.text.split('\n').filter((id) => !this.removed.has(id));
    return [...kept, ...this.added].filter((id) => id !== '').join('\n');
  }

  *[Symbol.iterator](): Iterator<string> {
    yield* this.toSet();
  }

  private toSet(): Set<string> {
    if (!this.set) {
      this.set = new Set(this.text.split('\n').filter((id) => id !== '' && !this.removed.has(id)));
      for (const id of this.added) this.set.add(id);
      this.text = '\n';
      this.added.clear();
      this.removed.clear();
    }
    return this.set;
  }
}
