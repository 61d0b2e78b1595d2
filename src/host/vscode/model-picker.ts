import * as vscode from 'vscode';
import { createModelLister, modelChoices, type ModelLister } from '../../core/model/model-list';
import type { Services } from './services';
import { readSettings, SETTINGS_SECTION } from './settings';

export const CHOOSE_MODEL_COMMAND = 'agentCheckpoints.chooseModel';

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
    s.log.log(
      'warn',
      `could not list the models: ${error instanceof Error ? error.message : String(error)}; offering the known current ones`,
    );
    return undefined;
  }
}

/** "Agent: Choose Model...": the models the API lists (cached), with windows and prices; sets agentCheckpoints.model. */
export async function chooseModel(s: Services): Promise<string | undefined> {
  const items = modelChoices(await listedModels(s));
  const current = readSettings().model;
  const picked = await s.prompts.quickPick(
    items.map((item) => ({ ...item, picked: item.id === current })),
    { title: 'Agent: Choose Model', placeHolder: `Model for new runs (now ${current})`, matchOnDescription: true },
  );
  if (!picked) return undefined;
  await vscode.workspace.getConfiguration(SETTINGS_SECTION).update('model', picked.id, vscode.ConfigurationTarget.Global);
  return picked.id;
}
