#!/usr/bin/env node
// The dead-letter tool's entry point (`npm run dlq -- <command>`, or the package bin `orders-dlq`).
import { runDlqCli, terminalConfirm } from './dlqProgram.js';

runDlqCli(process.argv.slice(2), {
  stdout: (text) => process.stdout.write(`${text}\n`),
  stderr: (text) => process.stderr.write(`${text}\n`),
  confirm: terminalConfirm(),
  env: process.env,
}).then((code) => {
  process.exitCode = code;
});
