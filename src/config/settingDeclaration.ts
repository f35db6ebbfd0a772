import type { z } from 'zod';

/**
 * Who reads a setting: the Functions host (a binding expression, a trigger's connection, its own),
 * the app (`loadSettings`, which every function runs at start-up), the telemetry set-up, the operator
 * tool (`npm run ops`, `npm run doctor`, with the app's rules and defaults).
 */
export type SettingReader = 'host' | 'app' | 'telemetry' | 'operator tool';

/** What the settings reference (docs/settings.md) and local.settings.sample.json say of a setting. */
export interface SettingDocs {
  /** The reference's table that lists it: the Functions host's own settings, or the app's. */
  readonly table: 'host' | 'app';
  readonly readBy: readonly SettingReader[];
  readonly unit?: string;
  /** Holds a credential: in Azure a Key Vault reference or an identity, never a value in a file. */
  readonly secret?: boolean;
  /** The Default column, when it says more than the default's value (or the setting has none of the app's). */
  readonly defaultText?: string;
  /** Said after the default's value in the Default column, e.g. `30 d`. */
  readonly defaultNote?: string;
  /** Its value in local.settings.sample.json; null: not listed there; absent: its default, or empty. */
  readonly localValue?: string | null;
  /** The Meaning column, in Markdown. */
  readonly description: string;
}

/** A setting, declared once: its name is its key in `settingDeclarations`. */
export interface SettingDeclaration extends SettingDocs {
  /** What the app uses when the setting is absent or empty. */
  readonly default?: string | number;
  /**
   * How the app reads it; absent for a setting only the host or the telemetry set-up reads. A function,
   * so that each rule is built when the settings are read, not when the module loads (see settingsSchema).
   */
  readonly schema?: () => z.ZodType;
}
