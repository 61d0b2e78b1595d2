import { findRipgrep } from '../../unit/tools/search-support';
import { enginesAgree, searchTextCases } from '../../unit/tools/search-text-cases';

// The search_text cases with ripgrep (a child process per search), and the two engines side by side.
const RG = findRipgrep();
if (RG !== null) searchTextCases('ripgrep', RG);
enginesAgree();
