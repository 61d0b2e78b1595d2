import { buildSync } from 'esbuild';
buildSync({ entryPoints: ['/work/main/test/bench/_scan.ts'], outfile: '/tmp/prof/scan.js', bundle: true, platform: 'node', format: 'cjs', target: 'node20', logLevel: 'warning' });
