import * as vscode from 'vscode';
import { ABSENT, type Patch } from '../../../core/patches/schema';

/** Read-only documents holding a patch's before content: the left side of its diff. */
export const BEFORE_SCHEME = 'agent-checkpoints-before';

export interface PatchSource {
  findPatch(runId: string, patchId: string): Promise<Patch | undefined>;
  readBlob(hash: string): Promise<Uint8Array>;
}

export interface PatchRef {
  readonly runId: string;
  readonly patchId: string;
}

/** `agent-checkpoints-before:/<path>?runId=…&patchId=…`; `empty` stands for an absent file. */
export function beforeUri(patch: Patch, options: { scheme?: string; empty?: boolean } = {}): vscode.Uri {
  const query = new URLSearchParams({ runId: patch.runId, patchId: patch.patchId });
  if (options.empty) query.set('side', 'empty');
  return vscode.Uri.from({ scheme: options.scheme ?? BEFORE_SCHEME, path: `/${patch.path}`, query: query.toString() });
}

export function patchRefOf(uri: vscode.Uri): PatchRef | undefined {
  const query = new URLSearchParams(uri.query);
  const runId = query.get('runId');
  const patchId = query.get('patchId');
  return runId && patchId ? { runId, patchId } : undefined;
}

export class BeforeContentProvider implements vscode.TextDocumentContentProvider {
  constructor(private readonly source: PatchSource) {}

  async provideTextDocumentContent(uri: vscode.Uri): Promise<string> {
    if (new URLSearchParams(uri.query).get('side') === 'empty') return '';
    const ref = patchRefOf(uri);
    if (!ref) throw new Error(`Not a patch document: ${uri.toString()}`);
    const patch = await this.source.findPatch(ref.runId, ref.patchId);
    if (!patch) throw new Error(`Patch ${ref.patchId} of run ${ref.runId} not found`);
    if (patch.beforeHash === ABSENT) return '';
    if (patch.binary) throw new Error(`${patch.path} was binary before this patch: no text diff`);
    if (!patch.beforeBlob) throw new Error(`The content of ${patch.path} before this patch was not kept (over the size cap)`);
    return new TextDecoder('utf-8').decode(await this.source.readBlob(patch.beforeBlob));
  }
}
