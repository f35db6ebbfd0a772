// azd postprovision hook: writes local.settings.json from the provisioned environment.
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { localSettingsFromAzd } from './localSettingsFromAzd.js';

const env = JSON.parse(execFileSync('azd', ['env', 'get-values', '--output', 'json'], { encoding: 'utf8' })) as Record<string, string>;
writeFileSync('local.settings.json', `${JSON.stringify(localSettingsFromAzd(env), null, 2)}\n`);
console.log('Wrote local.settings.json for the provisioned resources (identity-based; sign in with `az login`).');
