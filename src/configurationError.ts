export interface SettingProblem {
  readonly setting: string;
  readonly problem: string;
}

/** Settings are missing or wrong; the app refuses to start rather than process messages wrongly. */
export class ConfigurationError extends Error {
  override readonly name = 'ConfigurationError';
  constructor(readonly problems: readonly SettingProblem[]) {
    super(`Invalid settings: ${problems.map((p) => `${p.setting}: ${p.problem}`).join('; ')}`);
  }
}
