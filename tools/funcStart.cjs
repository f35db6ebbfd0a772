#!/usr/bin/env node
// `npm start`: what the Functions quickstarts do (build, then `func start`), and one clear line
// instead of a shell's "command not found" where Core Tools is not installed.
'use strict';
const { spawn, spawnSync } = require('node:child_process');

const probe = spawnSync('func', ['--version'], { stdio: 'ignore', shell: process.platform === 'win32' });
if (probe.error || probe.status !== 0) {
  console.error('Azure Functions Core Tools (func) is not installed: run `npm run local -- --serve` for the Docker-free local stack with this app, or install Core Tools v4 and the settings it prints (docs/local-stack.md).');
  process.exit(1);
}
const func = spawn('func', ['start', ...process.argv.slice(2)], { stdio: 'inherit', shell: process.platform === 'win32' });
func.on('exit', (code, signal) => process.exit(signal ? 1 : (code ?? 1)));
for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => func.kill(signal));
