import type { ContentBlock, MessageParam } from '../../../src/core/model/messages';
import type { ModelProvider, ModelRequest, ModelResponse } from '../../../src/core/model/provider';
import { SUMMARY_REQUEST } from '../../../src/core/runtime/compaction';
import { Prng } from '../faults/prng';
import { drawAnswer, playDrawn } from './drawn-answers';

// The model's side of the walk: a seeded random agent over a handful of files. It answers with
// text, or with one or two tool calls (read, edit, write, delete, a counted command); a summary
// request gets a summary. Edits aim at lines the files hold now, so most of them apply. About one
// answer in seven is drawn from the table of documented answers (drawn-answers.ts); `finishing`
// makes it answer normally and briefly (the stranded-run check at a sequence's end).

export const WALK_FILES = ['a.txt', 'b.txt', 'src/c.txt', 'd.txt'] as const;

export interface WalkModelView {
  /** The workspace's text files now (path -> text). */
  files(): ReadonlyMap<string, string>;
  /** Called with every request before it is answered (the walk's checks); the answer waits for it. */
  onRequest(request: ModelRequest): Promise<void>;
}

function lastUserText(messages: readonly MessageParam[]): string {
  const last = messages[messages.length - 1];
  if (!last || last.role !== 'user') return '';
  if (typeof last.content === 'string') return last.content;
  return last.content.map((b) => (b.type === 'text' ? String(b.text) : '')).join('\n');
}

export class WalkModel implements ModelProvider {
  readonly name = 'walk-model';
  private readonly prng: Prng;
  private readonly drawPrng: Prng;
  private calls = 0;
  answers = 0;
  /** Answers drawn from the table of documented answers. */
  drawn = 0;
  /** Answer every request normally with a short final text (no draws, no calls). */
  finishing = false;
  /** Answers given while finishing (not the walk's own). */
  finished = 0;

  constructor(
    seed: number,
    private readonly view: WalkModelView,
  ) {
    this.prng = new Prng(seed ^ 0x5eed);
    this.drawPrng = new Prng(seed ^ 0xd4a3);
  }

  async complete(request: ModelRequest): Promise<ModelResponse> {
    await this.view.onRequest(request);
    this.answers += 1;
    const summary = lastUserText(request.messages).includes(SUMMARY_REQUEST);
    if (this.finishing) this.finished += 1;
    const shape = summary || this.finishing ? undefined : drawAnswer(this.drawPrng);
    if (shape) {
      this.drawn += 1;
      return playDrawn(shape, this.answers, request.model);
    }
    const content = summary ? [this.text('Summary: files edited, commands run.')] : this.finishing ? [this.text('Finished.')] : this.turn();
    const stopReason = content.some((b) => b.type === 'tool_use') ? 'tool_use' : 'end_turn';
    return {
      id: `msg_walk_${this.answers}`,
      model: request.model,
      content,
      stopReason,
      usage: { inputTokens: 200 + this.prng.int(400), outputTokens: 20 + this.prng.int(60) },
    };
  }

  private text(text: string): ContentBlock {
    return { type: 'text', text };
  }

  private turn(): ContentBlock[] {
    if (this.prng.next() < 0.2) return [this.text(`Done (answer ${this.answers}).`)];
    const blocks: ContentBlock[] = this.prng.next() < 0.5 ? [this.text('Working on it.')] : [];
    const n = this.prng.next() < 0.3 ? 2 : 1;
    for (let i = 0; i < n; i++) blocks.push(this.call());
    return blocks;
  }

  private call(): ContentBlock {
    const id = `toolu_walk_${++this.calls}`;
    const files = this.view.files();
    const existing = [...files.keys()];
    const roll = this.prng.next();
    const path = existing.length > 0 && roll < 0.75 ? this.prng.pick(existing) : this.prng.pick(WALK_FILES);
    const text = files.get(path);
    if (roll < 0.15) return { type: 'tool_use', id, name: 'read_file', input: { path } };
    if (roll < 0.55 && text !== undefined) {
      const lines = text.split('\n').filter((l) => l.trim() !== '');
      const line = lines.length > 0 ? this.prng.pick(lines) : 'missing line';
      return { type: 'tool_use', id, name: 'edit_file', input: { path, old_string: line, new_string: `${line} +${this.calls}` } };
    }
    if (roll < 0.75) {
      const body = Array.from({ length: 1 + this.prng.int(6) }, (_, k) => `line ${k} of ${id}`).join('\n');
      return { type: 'tool_use', id, name: 'write_file', input: { path, content: `${body}\n` } };
    }
    if (roll < 0.8 && text !== undefined) return { type: 'tool_use', id, name: 'delete_file', input: { path } };
    return { type: 'tool_use', id, name: 'run_command', input: { command: `echo ${id}` } };
  }
}
