// The Node worker injects '@azure/functions-core' by proxying Module.prototype.require; without it
// @azure/functions silently skips registrations ("test mode"). vi.mock cannot reach the library's
// bundled require, so this does what the worker does. Import it before the app registers anything;
// the local runner and the tests then see exactly the registrations the host would receive.
import { Module } from 'node:module';

export interface RegisteredFunction {
  readonly metadata: FunctionMetadata;
  readonly callback: (...args: unknown[]) => unknown;
}

export interface FunctionMetadata {
  readonly name: string;
  readonly bindings: Record<string, Record<string, unknown>>;
  readonly retryOptions?: unknown;
}

interface ProgrammingModel {
  getInvocationModel(coreContext: unknown): {
    getArguments(): Promise<{ context: unknown; inputs: unknown[] }>;
    invokeFunction(context: unknown, inputs: unknown[], handler: RegisteredFunction['callback']): Promise<unknown>;
    getResponse(context: unknown, result: unknown): Promise<{ returnValue?: unknown }>;
  };
}

/** A hook the app registered (`app.hook.preInvocation`, `log`, ...), as the worker keeps them. */
export type HookCallback = (coreContext: Record<string, unknown>) => unknown;

const state = globalThis as typeof globalThis & {
  __registeredFunctions?: RegisteredFunction[];
  __programmingModel?: ProgrammingModel;
  __hooks?: Map<string, Set<HookCallback>>;
};
state.__registeredFunctions ??= [];
state.__hooks ??= new Map();

/** The hooks registered under a name (`preInvocation`, `postInvocation`, `log`), in registration order. */
export const registeredHooks = (name: string): readonly HookCallback[] => [...(state.__hooks?.get(name) ?? [])];

export const registeredFunctions = (): readonly RegisteredFunction[] => state.__registeredFunctions ?? [];
export const programmingModel = (): ProgrammingModel => {
  if (!state.__programmingModel) throw new Error('no programming model was registered');
  return state.__programmingModel;
};

const functionsCore = {
  version: 'test',
  hostVersion: '4.1040.0',
  registerHook: (name: string, callback: HookCallback) => {
    const hooks = state.__hooks?.get(name) ?? new Set<HookCallback>();
    hooks.add(callback);
    state.__hooks?.set(name, hooks);
    return { dispose: () => hooks.delete(callback) };
  },
  setProgrammingModel: (model: ProgrammingModel) => {
    state.__programmingModel = model;
  },
  getProgrammingModel: () => state.__programmingModel,
  registerFunction: (metadata: FunctionMetadata, callback: RegisteredFunction['callback']) => {
    state.__registeredFunctions?.push({ metadata, callback });
    return { dispose() {} };
  },
  log: () => {},
  Disposable: class {
    constructor(private readonly onDispose: () => void) {}
    dispose() {
      this.onDispose();
    }
  },
};

type Require = (this: unknown, id: string) => unknown;
const proto = Module.prototype as unknown as { require: Require; __functionsCorePatched?: boolean };
if (!proto.__functionsCorePatched) {
  const original = proto.require;
  proto.require = function patchedRequire(this: unknown, id: string) {
    return id === '@azure/functions-core' ? functionsCore : original.call(this, id);
  };
  proto.__functionsCorePatched = true;
}
