import type { LocalStack } from '../../dev/local/localStack.js';
import { runDlqCli } from '../../src/cli/dlqProgram.js';

export interface ToolRun {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

/** The operator tool, run in process against a local stack's Service Bus and Cosmos DB as an operator's shell would. */
export async function runOperatorTool(stack: LocalStack, args: readonly string[]): Promise<ToolRun> {
  const out: string[] = [];
  const err: string[] = [];
  const env = {
    SERVICEBUS_CONNECTION_STRING: stack.settings.ServiceBusConnection,
    COSMOS_ENDPOINT: stack.settings.COSMOS_ENDPOINT,
    COSMOS_KEY: stack.settings.COSMOS_KEY,
  };
  const code = await runDlqCli([...args], { stdout: (t) => out.push(t), stderr: (t) => err.push(t), env });
  return { code, stdout: out.join('\n'), stderr: err.join('\n') };
}
