import { findRipgrep } from '../../unit/tools/search-support';
import { searchBuffersCases } from '../../unit/tools/search-buffers-cases';

// The unsaved-buffer cases with ripgrep (a child process per search).
const RG = findRipgrep();
if (RG !== null) searchBuffersCases('ripgrep', RG);
