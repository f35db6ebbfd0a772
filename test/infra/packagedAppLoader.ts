// Run in its own process (`node --import tsx packagedAppLoader.ts <app root>`): loads a built
// package as the Node worker would, with that package's own node_modules and nothing of the test
// run's modules or settings, and prints what each file that package.json "main" names registered:
// { "dist/functions/processOrder.js": ["processOrder"], ... }.
import { readFileSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import '../../emulators/functions-host/functionsCore.js'; // before the app loads: the worker's hook that captures registrations
import { registeredFunctions } from '../../emulators/functions-host/functionsCore.js';
import { filesMatching } from '../../emulators/functions-host/loadFunctionApp.js';

const appRoot = process.argv[2];
if (!appRoot) throw new Error('usage: packagedAppLoader.ts <app root>');
const main = (JSON.parse(readFileSync(join(appRoot, 'package.json'), 'utf8')) as { main?: string }).main ?? '';

const registered: Record<string, string[]> = {};
for (const file of filesMatching(appRoot, main)) {
  const before = registeredFunctions().length;
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- the worker loads the app with require, and so do we
  require(file);
  registered[relative(appRoot, file).split(sep).join('/')] = registeredFunctions()
    .slice(before)
    .map((fn) => fn.metadata.name);
}
process.stdout.write(`${JSON.stringify(registered)}\n`);
// The app's clients keep no socket open before a first call, but a timer or a telemetry exporter
// must not keep this process alive after the answer.
process.exit(0);
