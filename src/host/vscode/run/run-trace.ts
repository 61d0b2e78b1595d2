import type { Log } from '../../../core/ports';
import type { RuntimeEvent } from '../../../core/runtime/types';
import { counted } from '../../../words/words';

/**
 * Turns runtime events into the run's trace in the log: model calls with their duration and
 * usage, ledger transitions, save points, status changes. Text deltas are not logged.
 */
export class RunTrace {
  private modelStartedAt: number | undefined;
  private readonly toolStartedAt = new Map<string, number>();

  constructor(
    private readonly log: Log,
    private readonly now: () => number = Date.now,
  ) {}

  handle(event: RuntimeEvent): void {
    switch (event.type) {
      case 'checkpoint':
        return this.onCheckpoint(event.runId, event.checkpoint);
      case 'ledger':
        return this.onLedger(event.runId, event.entry);
      case 'model':
        if (event.event.type === 'retry')
          this.log.log('warn', `[${event.runId}] model call retry ${event.event.attempt}: ${event.event.error}`);
        else if (event.event.type === 'tool_use_start')
          this.log.log('debug', `[${event.runId}] model asks for ${event.event.name} (${event.event.id})`);
        return;
      case 'status':
        return this.log.log(
          event.status === 'failed' ? 'error' : 'info',
          `[${event.runId}] status ${event.status}${event.reason !== undefined ? `: ${event.reason}` : ''}`,
        );
      case 'records':
        return this.log.log(
          'debug',
          `[${event.runId}] ${counted(event.records.length, 'record')} durable, last seq ${event.records.at(-1)?.seq ?? '-'}`,
        );
    }
  }

  private onCheckpoint(runId: string, checkpoint: Extract<RuntimeEvent, { type: 'checkpoint' }>['checkpoint']): void {
    const at = this.now();
    const call = checkpoint.callId !== undefined ? ` ${checkpoint.callId}` : '';
    this.log.log('info', `[${runId}] save point ${checkpoint.label} step ${checkpoint.stepId}${call} (${checkpoint.checkpointId})`);
    if (checkpoint.label === 'before_model') this.modelStartedAt = at;
    if (checkpoint.label === 'after_model') {
      const took = this.modelStartedAt !== undefined ? `${at - this.modelStartedAt} ms` : 'unknown time';
      const b = checkpoint.budget;
      this.log.log(
        'info',
        `[${runId}] model call ${b.turns}/${b.maxTurns} took ${took}, stop ${checkpoint.stopReason ?? '-'}; tokens in ${b.inputTokens} out ${b.outputTokens}, cost $${b.costUsd.toFixed(4)}`,
      );
      this.modelStartedAt = undefined;
    }
  }

  private onLedger(runId: string, entry: Extract<RuntimeEvent, { type: 'ledger' }>['entry']): void {
    const at = this.now();
    if (entry.status === 'started') this.toolStartedAt.set(entry.callId, at);
    const started = this.toolStartedAt.get(entry.callId);
    const finished = entry.status === 'succeeded' || entry.status === 'failed' || entry.status === 'uncertain';
    const took = finished && started !== undefined ? ` after ${at - started} ms` : '';
    if (finished) this.toolStartedAt.delete(entry.callId);
    const why = entry.reason !== undefined ? ` (${entry.reason})` : '';
    this.log.log(
      entry.status === 'failed' ? 'warn' : 'info',
      `[${runId}] ledger ${entry.toolName} ${entry.callId} -> ${entry.status}${took}${why}`,
    );
  }
}
