import { HostToWebview, parseMessage } from '../protocol/messages';
import type { TimelineModel } from './model';
import type { Rpc } from './rpc';

/** Why the rows changed: `listed`, runs of the view's opening came after its snapshot (none is new to the person). */
export type RefreshReason = 'snapshot' | 'listed' | 'delta' | 'live' | 'removed' | 'stream' | 'approvals';

export interface DispatchDeps {
  readonly model: TimelineModel;
  readonly rpc: Rpc;
  /** The rows changed: re-flatten and render. `appended` when only new records arrived. */
  changed(reason: RefreshReason): void;
  notice(level: 'info' | 'error', text: string): void;
  /** The window's selected run changed (null: none). */
  selected(runId: string | null): void;
  /** Whether the view should ask for an API key (the provider is Anthropic and none is set). */
  keyState?(missing: boolean): void;
  logError(text: string): void;
}

/** Handles one message from the host. A malformed one is logged and changes nothing. */
export function dispatchHostMessage(data: unknown, deps: DispatchDeps): boolean {
  const parsed = parseMessage(HostToWebview, data);
  if (!parsed.ok) {
    deps.logError(`timeline: rejected host message: ${parsed.error}`);
    return false;
  }
  const message = parsed.value;
  switch (message.type) {
    case 'snapshot':
      deps.model.replaceAll(message.runs);
      deps.changed('snapshot');
      return true;
    case 'runsListed':
      deps.model.addListed(message.runs);
      deps.changed('listed');
      return true;
    case 'runDelta':
      deps.model.applyDelta(message);
      deps.changed('delta');
      return true;
    case 'runRemoved':
      if (deps.model.remove(message.runId)) deps.changed('removed');
      return true;
    case 'patchLive':
      if (deps.model.applyPatchLive(message) > 0) deps.changed('live');
      return true;
    case 'reply':
      if (!deps.rpc.handleReply(message)) deps.logError(`timeline: reply to unknown request ${message.requestId}`);
      return true;
    case 'notice':
      deps.notice(message.level, message.text);
      return true;
    case 'stream':
      deps.model.appendStream(message);
      deps.changed('stream');
      return true;
    case 'approvals':
      deps.model.approvals = message.pending;
      deps.changed('approvals');
      return true;
    case 'selected':
      deps.selected(message.runId);
      return true;
    case 'keyState':
      deps.keyState?.(message.missing);
      return true;
  }
}
