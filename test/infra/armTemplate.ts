import { evaluateValue, isRuntimeText } from './armExpressions.js';
import type { Scope } from './armExpressions.js';

/** One resource of the deployment, every expression evaluated (runtime values left symbolic). */
export interface DeployedResource {
  readonly type: string;
  readonly name: string;
  /** The module (nested deployment) that declares it; '' for the entry template. */
  readonly module: string;
  readonly resourceGroup: string;
  readonly scope?: string;
  readonly existing: boolean;
  readonly body: Record<string, unknown>;
}

export interface Deployment {
  readonly resources: DeployedResource[];
  readonly outputs: Record<string, unknown>;
}

interface Template {
  parameters?: Record<string, { defaultValue?: unknown }>;
  variables?: Record<string, unknown>;
  functions?: { namespace: string; members: Scope['functions'] }[];
  resources: Record<string, TemplateResource> | TemplateResource[];
  outputs?: Record<string, { value?: unknown; copy?: { count: unknown; input: unknown } }>;
}

interface TemplateResource {
  type: string;
  name: string;
  condition?: unknown;
  copy?: { name: string; count: unknown };
  existing?: boolean;
  resourceGroup?: unknown;
  scope?: unknown;
  properties?: { template?: Template; parameters?: Record<string, unknown> };
  [field: string]: unknown;
}

export const testSubscriptionId = '00000000-0000-0000-0000-00000000cafe';

/**
 * Expands a compiled template as ARM would up to the point where Azure must answer: parameters and
 * variables, copy loops, conditions, user-defined functions and nested deployments (Bicep modules),
 * whose parameters may be outputs of other modules and stay symbolic.
 */
export function expandDeployment(template: Template, parameters: Record<string, unknown>, resourceGroup = '', module = ''): Deployment {
  const modules = new Map<string, () => Deployment>();
  const scope = scopeFor(template, parameters, resourceGroup, (id) => {
    const outputs = modules.get(id)?.().outputs;
    return outputs && { outputs: Object.fromEntries(Object.entries(outputs).map(([k, value]) => [k, { value }])) };
  });
  const resources: DeployedResource[] = [];
  const entries = Array.isArray(template.resources) ? template.resources : Object.values(template.resources);
  for (const resource of entries) {
    const count = resource.copy ? Number(evaluateValue(resource.copy.count, scope)) : 1;
    for (let i = 0; i < count; i += 1) {
      const iteration: Scope = resource.copy ? { ...scope, copyIndex: { '': i, [resource.copy.name]: i } } : scope;
      if (resource.condition !== undefined && !evaluateValue(resource.condition, iteration)) continue;
      if (isModule(resource)) {
        const { id, expand } = moduleOf(resource, iteration);
        modules.set(id, expand);
      }
    }
  }
  for (const resource of entries) {
    const count = resource.copy ? Number(evaluateValue(resource.copy.count, scope)) : 1;
    for (let i = 0; i < count; i += 1) {
      const iteration: Scope = resource.copy ? { ...scope, copyIndex: { '': i, [resource.copy.name]: i } } : scope;
      if (resource.condition !== undefined && !evaluateValue(resource.condition, iteration)) continue;
      if (isModule(resource)) resources.push(...(modules.get(moduleOf(resource, iteration).id)?.().resources ?? []));
      else resources.push(expandResource(resource, iteration, module));
    }
  }
  const outputs = Object.fromEntries(Object.entries(template.outputs ?? {}).map(([name, o]) => [name, outputValue(o, scope)]));
  return { resources, outputs };
}

/** An output's value; a copy output (`[for ...]`) is the array of its input at each index. */
function outputValue(output: { value?: unknown; copy?: { count: unknown; input: unknown } }, scope: Scope): unknown {
  if (!output.copy) return evaluateValue(output.value, scope);
  const { count, input } = output.copy;
  return Array.from({ length: Number(evaluateValue(count, scope)) }, (_, i) => evaluateValue(input, { ...scope, copyIndex: { ...scope.copyIndex, '': i } }));
}

/** A module parameter: `{ value }`, or (a conditional value) one expression that yields `{ value }`. */
function moduleParameter(parameter: unknown, scope: Scope): unknown {
  const evaluated = evaluateValue(parameter, scope) as { value?: unknown };
  return evaluated.value;
}

const isModule = (r: TemplateResource) => r.type === 'Microsoft.Resources/deployments' && r.properties?.template !== undefined;

/** A Bicep module: its deployment id, and its expansion, computed once and only when needed. */
function moduleOf(resource: TemplateResource, scope: Scope): { id: string; expand: () => Deployment } {
  const name = String(evaluateValue(resource.name, scope));
  const group = resource.resourceGroup === undefined ? scope.resourceGroup : String(evaluateValue(resource.resourceGroup, scope));
  const id = `/subscriptions/${scope.subscriptionId}/resourceGroups/${group}/providers/Microsoft.Resources/deployments/${name}`;
  let expanded: Deployment | undefined;
  const expand = () => {
    if (!expanded) {
      const params = Object.fromEntries(Object.entries(resource.properties?.parameters ?? {}).map(([k, v]) => [k, moduleParameter(v, scope)]));
      expanded = expandDeployment(resource.properties?.template as Template, params, group, name);
    }
    return expanded;
  };
  return { id, expand };
}

function expandResource(resource: TemplateResource, scope: Scope, module: string): DeployedResource {
  const name = String(evaluateValue(resource.name, scope));
  const { properties, ...rest } = resource;
  const body = evaluateValue({ ...rest, properties }, scope) as Record<string, unknown>;
  return {
    type: resource.type,
    name,
    module,
    resourceGroup: scope.resourceGroup,
    scope: resource.scope === undefined ? undefined : String(evaluateValue(resource.scope, scope)),
    existing: resource.existing === true,
    body,
  };
}

function scopeFor(template: Template, given: Record<string, unknown>, resourceGroup: string, reference: Scope['reference']): Scope {
  const parameters: Record<string, unknown> = {};
  for (const [name, definition] of Object.entries(template.parameters ?? {})) {
    if (name in given) parameters[name] = given[name];
    else if ('defaultValue' in definition) parameters[name] = definition.defaultValue;
    else throw new Error(`parameter ${name} has no value`);
  }
  const cache = new Map<string, unknown>();
  const functions = Object.assign({}, ...(template.functions ?? []).map((f) => f.members)) as Scope['functions'];
  const scope: Scope = {
    parameters,
    functions,
    copyIndex: {},
    subscriptionId: testSubscriptionId,
    resourceGroup,
    reference,
    variable: (name) => {
      if (!cache.has(name)) {
        if (!template.variables || !(name in template.variables)) throw new Error(`no variable ${name}`);
        cache.set(name, evaluateValue(template.variables[name], scope));
      }
      return cache.get(name);
    },
  };
  return scope;
}

export function isRuntime(value: unknown): boolean {
  return isRuntimeText(value);
}
