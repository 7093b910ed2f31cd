// `goald state restore`: the one way a corrupt state.json is replaced — only when the user asks.

import { resolveGoaldHome, restoreFromBackup } from '../../../state/index.js';
import { EXIT } from '../../errors.js';
import type { CliIO } from '../io.js';

/** Restores state.json from state.json.bak, keeping the replaced file beside it. */
export async function runStateRestore(io: CliIO): Promise<number> {
  const result = await restoreFromBackup(resolveGoaldHome(io.env));
  io.out(`restored ${result.path} from ${result.backupPath}${result.replacedCopyPath ? `; the replaced file was kept as ${result.replacedCopyPath}` : ''}`);
  return EXIT.ok;
}
