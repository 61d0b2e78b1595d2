import type * as vscode from 'vscode';
import type { Log, LogLevel } from '../../../core/ports';

/** Anything shaped like an Anthropic key, even one this session was never told about. */
const KEY_SHAPE = /sk-ant-[A-Za-z0-9_-]{8,}/g;
export const REDACTED = '[redacted]';

export function redact(text: string, secrets: readonly string[]): string {
  let out = text.replace(KEY_SHAPE, REDACTED);
  for (const secret of secrets) if (secret.length >= 4) out = out.split(secret).join(REDACTED);
  return out;
}

function describeData(data: Record<string, unknown> | undefined): string {
  if (data === undefined || Object.keys(data).length === 0) return '';
  try {
    return ` ${JSON.stringify(data, (_key, value: unknown) => (value instanceof Error ? value.message : value))}`;
  } catch {
    return ' [data not serialisable]';
  }
}

/** The core Log port over the "Agent Checkpoints" LogOutputChannel; known secrets never reach it. */
export function createOutputLog(
  channel: Pick<vscode.LogOutputChannel, 'debug' | 'info' | 'warn' | 'error'>,
  secrets: () => readonly string[],
): Log {
  const write: Record<LogLevel, (line: string) => void> = {
    debug: (line) => channel.debug(line),
    info: (line) => channel.info(line),
    warn: (line) => channel.warn(line),
    error: (line) => channel.error(line),
  };
  return {
    log(level, message, data) {
      write[level](redact(`${message}${describeData(data)}`, secrets()));
    },
  };
}
