/** The azd environment (outputs of infra/main.bicep), as `azd env get-values --output json` prints it. */
export type AzdEnvironment = Readonly<Record<string, string>>;
export interface LocalSettings {
  IsEncrypted: false;
  Values: Record<string, string>;
}
export function localSettingsFromAzd(env: AzdEnvironment): LocalSettings;
export function writeLocalSettings(path: string, settings: LocalSettings, now?: Date): string | undefined;
