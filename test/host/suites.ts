import { activationSuite } from './suite/activation.test';
import { agentRunSuite } from './suite/agent-run.test';
import { cancelResumeSuite } from './suite/cancel-resume.test';
import { compareSuite } from './suite/compare.test';
import { diagnosticsSuite } from './suite/diagnostics.test';
import { everyToolSuite } from './suite/every-tool.test';
import { gitCommitSuite } from './suite/git-commit.test';
import { instructionsSearchSuite } from './suite/instructions-search.test';
import { firstHourSuite } from './suite/first-hour.test';
import { interruptedSuite } from './suite/interrupted.test';
import { liveWorkspaceSuite } from './suite/live-workspace.test';
import { lmSuite } from './suite/lm.test';
import { secretsSuite, trustSuite } from './suite/secrets-trust.test';
import { reviewSuite } from './suite/review.test';
import { securitySuite } from './suite/security.test';
import { takeOverSuite } from './suite/takeover.test';
import { timelineBackendSuite } from './suite/timeline-backend.test';
import { timelineSuite } from './suite/timeline.test';
import { tornTailSuite } from './suite/torn-tail.test';

/**
 * Every host suite, in order. Each file exports a function that calls describe/it, because the
 * bundle evaluates imports before mocha has put describe/it on the global object.
 * The secrets suite runs last: it scans the store every earlier run wrote.
 */
export const HOST_SUITES: ReadonlyArray<() => void> = [
  activationSuite,
  liveWorkspaceSuite,
  trustSuite,
  securitySuite,
  agentRunSuite,
  everyToolSuite,
  gitCommitSuite,
  diagnosticsSuite,
  instructionsSearchSuite,
  cancelResumeSuite,
  interruptedSuite,
  takeOverSuite,
  tornTailSuite,
  timelineBackendSuite,
  timelineSuite,
  compareSuite,
  reviewSuite,
  firstHourSuite,
  lmSuite,
  secretsSuite,
];
