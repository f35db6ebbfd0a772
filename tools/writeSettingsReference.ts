// npm run settings:write: docs/settings.md's tables and local.settings.sample.json from the settings' declaration.
import { readFileSync, writeFileSync } from 'node:fs';
import { localSettingsSample, withSettingsTables } from './settingsReference.js';

const referencePath = 'docs/settings.md';
writeFileSync(referencePath, withSettingsTables(readFileSync(referencePath, 'utf8')));
writeFileSync('local.settings.sample.json', localSettingsSample());
console.log(`wrote the tables of ${referencePath} and local.settings.sample.json`);
