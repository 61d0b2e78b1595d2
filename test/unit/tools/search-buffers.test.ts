import { searchBuffersCases } from './search-buffers-cases';

// Unsaved buffers with the Node fallback, in process; test/system/tools/search-buffers.test.ts runs
// the same cases with ripgrep.
searchBuffersCases('node fallback', null);
