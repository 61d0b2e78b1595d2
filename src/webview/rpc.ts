import type * as z from 'zod/mini';
import type { ReplyMessage, RequestParamsOf, ResultOf, Method, RequestMessage } from '../protocol/messages';
import { ResultSchemas, parseMessage } from '../protocol/messages';

interface Pending {
  readonly method: Method;
  resolve(value: unknown): void;
  reject(error: Error): void;
  readonly timer: ReturnType<typeof setTimeout>;
}

/** Requests to the host with ids; replies matched by id and their results parsed. */
export class Rpc {
  private next = 1;
  private readonly pending = new Map<string, Pending>();

  constructor(
    private readonly post: (message: RequestMessage) => void,
    private readonly timeoutMs = 120_000,
  ) {}

  request<M extends Method>(method: M, params: RequestParamsOf<M>): Promise<ResultOf<M>> {
    const requestId = `w${this.next++}`;
    return new Promise<ResultOf<M>>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending.delete(requestId);
        reject(new Error(`${method}: no answer from the extension`));
      }, this.timeoutMs);
      this.pending.set(requestId, { method, resolve: resolve as (v: unknown) => void, reject, timer });
      this.post({ type: 'request', requestId, method, params } as RequestMessage);
    });
  }

  /** Settles the matching request; false for a reply nobody waits for. */
  handleReply(reply: ReplyMessage): boolean {
    const pending = this.pending.get(reply.requestId);
    if (!pending) return false;
    this.pending.delete(reply.requestId);
    clearTimeout(pending.timer);
    if (!reply.ok) {
      pending.reject(new Error(reply.error ?? 'failed'));
      return true;
    }
    const schema: z.ZodMiniType<unknown> = ResultSchemas[pending.method];
    const parsed = parseMessage(schema, reply.result);
    if (parsed.ok) pending.resolve(parsed.value);
    else pending.reject(new Error(`${pending.method}: ${parsed.error}`));
    return true;
  }

  get waiting(): number {
    return this.pending.size;
  }
}
