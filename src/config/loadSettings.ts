import { ConfigurationError } from '../configurationError.js';
import { crossSettingProblems } from './crossSettingRules.js';
import { deepFreeze, parseOrThrow } from './environment.js';
import type { Environment } from './environment.js';
import { toSettings } from './settings.js';
import type { Settings } from './settings.js';
import { settingsSchema } from './settingsSchema.js';

/**
 * Reads and checks every setting once. Throws a `ConfigurationError` naming each bad setting, so
 * the worker fails to start with the reason instead of failing on the first message.
 */
export function loadSettings(env: Environment = process.env): Readonly<Settings> {
  const s = parseOrThrow(settingsSchema(), env);
  const problems = crossSettingProblems(s);
  if (problems.length > 0) throw new ConfigurationError(problems);
  return deepFreeze(toSettings(s));
}
