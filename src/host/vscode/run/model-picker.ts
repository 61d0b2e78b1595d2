import * as vscode from 'vscode';
import { createModelLister, modelChoices, type ModelLister } from '../../../core/model/model-list';
import { VSCODE_LM_PROVIDER, vscodeChatModels } from './lm/vscode-lm-provider';
import type { Services } from '../window/services';
import { readSettings, SETTINGS_SECTION } from '../window/settings';
import { errorText } from '../../../core/error-text';
import type { CommandId } from '../commands/command-table';

export const CHOOSE_MODEL_COMMAND = 'agentCheckpoints.chooseModel' satisfies CommandId;

/** One lister per key and base URL, so that its cache of the model list is kept between picks. */
let cached: { key: string; baseUrl: string; lister: ModelLister } | undefined;

async function listedModels(s: Services): Promise<Awaited<ReturnType<ModelLister['list']>> | undefined> {
  const settings = readSettings();
  const key = await s.apiKeys.get();
  // In a restricted workspace nothing is sent anywhere (its settings could name the server).
  if (!key || settings.provider !== 'anthropic' || !vscode.workspace.isTrusted) return undefined;
  if (cached?.key !== key.key || cached.baseUrl !== settings.baseUrl) {
    const lister = createModelLister({ apiKey: key.key, ...(settings.baseUrl !== '' ? { baseURL: settings.baseUrl } : {}) });
    cached = { key: key.key, baseUrl: settings.baseUrl, lister };
  }
  try {
    return await cached.lister.list();
  } catch (error) {
    s.log.log('warn', `could not list the models: ${errorText(error)}; offering the known current ones`);
    return undefined;
  }
}

/** "Agent: Choose Model...": the models the API lists (cached), with windows and prices; sets agentCheckpoints.model. */
export async function chooseModel(s: Services): Promise<string | undefined> {
  const settings = readSettings();
  const anthropic = modelChoices(await listedModels(s)).map((item) => ({ ...item, vscodeLm: false }));
  // VS Code's own chat models (Copilot and others), beside the Anthropic ones, only in a trusted workspace.
  const offered = vscode.workspace.isTrusted ? await vscodeChatModels().catch(() => []) : [];
  const items = [...anthropic, ...offered.map((item) => ({ ...item, vscodeLm: true }))];
  const current = settings.model;
  const picked = await s.prompts.quickPick(
    items.map((item) => ({ ...item, picked: item.id === current })),
    { title: 'Agent: Choose Model', placeHolder: `Model for new runs (now ${current})`, matchOnDescription: true },
  );
  if (!picked) return undefined;
  const config = vscode.workspace.getConfiguration(SETTINGS_SECTION);
  await config.update('model', picked.id, vscode.ConfigurationTarget.Global);
  if (picked.vscodeLm) await config.update('provider', VSCODE_LM_PROVIDER, vscode.ConfigurationTarget.Global);
  else if (settings.provider === VSCODE_LM_PROVIDER) await config.update('provider', 'anthropic', vscode.ConfigurationTarget.Global);
  return picked.id;
}
