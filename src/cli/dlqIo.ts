import type { TokenCredential } from '@azure/identity';
import type { ResubmitHooks } from './dlqCommands.js';
import type { OperatorActionIo } from './operatorActionLog.js';

/** What the operator tool reads and writes outside itself: the bin gives the process's, tests their own. */
export interface DlqIo {
  readonly stdout: (text: string) => void;
  readonly stderr: (text: string) => void;
  /** Answers a yes/no question; undefined when nobody can answer (no terminal). */
  readonly confirm?: (question: string) => Promise<boolean>;
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly hooks?: ResubmitHooks;
  /** The tool's clock; tests move it forward. */
  readonly now?: () => number;
  /**
   * Where the first line of every run goes (which namespace, entity and account): the bin sends it to
   * stderr, so `--json` output stays clean; tests that compare stderr leave it out.
   */
  readonly announce?: (line: string) => void;
  /** The Entra ID credential for Cosmos DB without a key; DefaultAzureCredential unless given (tests give a scoped principal's). */
  readonly cosmosCredential?: TokenCredential;
  /** Where operator-action records go and who acts (tests); by default the orders container and the credential. */
  readonly actions?: OperatorActionIo;
}
