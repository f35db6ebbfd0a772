export interface AzuritePorts {
  blob: number;
  queue: number;
  table: number;
}

export interface AzuriteHandle {
  state: 'not-needed' | 'already-running' | 'started';
  stop(): Promise<void>;
}

export const developmentStorage: 'UseDevelopmentStorage=true';
export const wellKnownPorts: Readonly<AzuritePorts>;
export function wantsDevelopmentStorage(value: string | undefined): boolean;
export function hostStorageSetting(appRoot: string, env?: Readonly<Record<string, string | undefined>>): string | undefined;
export function ensureAzurite(options: {
  storage: string | undefined;
  location: string;
  ports?: AzuritePorts;
  log?: (line: string) => void;
}): Promise<AzuriteHandle>;
