import { closeSync, constants, fstatSync, openSync, readSync } from 'node:fs';
import * as nodePath from 'node:path';
import * as vscode from 'vscode';
import type { RunSettings } from '../../../core/store/records';
import { runSettingsOf as runSettingsFrom } from '../../../core/runtime/agent';
import { type ExtensionSettings, readOneSettingFrom, readSettingsFrom, sectionKeysIn, SETTINGS_SECTION } from './settings-read';
import { commandSettings } from '../../node/sandbox/index';

export { ExtensionSettings, SettingsError, SETTINGS_SECTION } from './settings-read';

const MAX_SETTINGS_FILE = 1024 * 1024;

/** A small regular file's text, or undefined; never blocks on a FIFO or follows into a device. */
function smallRegularText(path: string): string | undefined {
  let fd: number | undefined;
  try {
    fd = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK);
    const stat = fstatSync(fd);
    if (!stat.isFile() || stat.size > MAX_SETTINGS_FILE) return undefined;
    const buffer = Buffer.alloc(stat.size);
    const read = readSync(fd, buffer, 0, stat.size, 0);
    return buffer.subarray(0, read).toString('utf8');
  } catch {
    return undefined;
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

/** The `agentCheckpoints.*` keys the open workspace's own settings files set (folder `.vscode/settings.json`, `.code-workspace`). */
function workspaceSettingKeys(): Set<string> {
  const keys = new Set<string>();
  for (const folder of vscode.workspace.workspaceFolders ?? []) {
    if (folder.uri.scheme !== 'file') continue;
    const text = smallRegularText(nodePath.join(folder.uri.fsPath, '.vscode', 'settings.json'));
    if (text !== undefined) for (const key of sectionKeysIn(text)) keys.add(key);
  }
  const file = vscode.workspace.workspaceFile;
  if (file?.scheme === 'file') {
    const text = smallRegularText(file.fsPath);
    if (text !== undefined) for (const key of sectionKeysIn(text, true)) keys.add(key);
  }
  return keys;
}

/**
 * Reads and validates the settings (a wrong value names the setting). Safety settings come from
 * the user's settings only; `warn` hears of each workspace value that was ignored.
 */
export function readSettings(warn?: (message: string) => void): ExtensionSettings {
  const config = vscode.workspace.getConfiguration(SETTINGS_SECTION);
  return readSettingsFrom(config, warn ? workspaceSettingKeys() : new Set(), warn);
}

/** One setting alone, whatever the others hold: its value (the default when wrong) and the words naming a wrong one. */
export function readOneSetting<K extends 'store' | 'provider'>(key: K): { value: ExtensionSettings[K]; problem?: string } {
  return readOneSettingFrom(vscode.workspace.getConfiguration(SETTINGS_SECTION), key);
}

/** The part of the settings a run records (never a credential). */
export function runSettingsOf(settings: ExtensionSettings, allowlist?: string): RunSettings {
  return runSettingsFrom({
    model: settings.model,
    provider: settings.provider,
    maxTurns: settings.maxTurns,
    maxTokens: settings.maxTokens,
    maxCostUsd: settings.maxCostUsd,
    maxOutputTokensPerCall: settings.maxOutputTokensPerCall,
    maxContextTokens: settings.maxContextTokens,
    thinking: settings.thinking === 'enabled' ? settings.thinkingBudgetTokens : settings.thinking,
    commands: commandSettings(settings.sandbox, settings.commandNetwork, allowlist),
  });
}
