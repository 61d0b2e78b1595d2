import { searchTextCases } from './search-text-cases';

// search_text with the Node fallback, in process; test/system/tools/search-text.test.ts runs the
// same cases with ripgrep (a child process per search) and compares the two engines.
searchTextCases('node fallback', null);
