/** An azd environment: its values (as `azd env get-values` prints them) and a way to set one (`azd env set`). */
export interface AzdEnvironmentStore {
  read(): Readonly<Record<string, string>>;
  set(name: string, value: string): void;
}
export function provideRetryStateSigningKey(environment: AzdEnvironmentStore, options?: { readonly inPipeline: boolean }): 'generated' | 'kept';
export function runsInPipeline(env: Readonly<Record<string, string | undefined>>): boolean;
