#!/usr/bin/env node
// The operator tool's entry point (`npm run ops -- <command>`, or the package bin `orders-ops`; `npm run dlq` and `orders-dlq` are aliases).
import { readAzdEnvironment } from './azdEnvironment.js';
import { runDlqCli } from './dlqProgram.js';
import { terminalConfirm } from './terminalConfirm.js';

async function main(): Promise<number> {
  // Inside an azd project, its environment's values are defaults; the process environment wins.
  const azd = await readAzdEnvironment(process.cwd(), process.env);
  return runDlqCli(process.argv.slice(2), {
    stdout: (text) => process.stdout.write(`${text}\n`),
    stderr: (text) => process.stderr.write(`${text}\n`),
    announce: (line) => process.stderr.write(`${line}\n`),
    confirm: terminalConfirm(),
    env: { ...azd, ...process.env },
  });
}

void main().then((code) => {
  process.exitCode = code;
});
