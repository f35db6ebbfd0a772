import { readFileSync } from 'node:fs';

/** A compiled template's parameter declarations, as far as azd looks at them. */
export type ParameterTypes = Record<string, { type: string }>;

/**
 * The parameters azd deploys with from an infra/*.parameters.json file: `${NAME}` and `${NAME=default}`
 * replaced from the environment (an unset name with no default becomes ''), then strings that read as
 * a bool or an integer converted for bool and int parameters, as azd's armParameterFileValue does
 * (Azure/azure-dev, pkg/infra/provisioning/bicep/bicep_provider.go).
 */
export function azdParameters(path: string, environment: Record<string, string>, types: ParameterTypes): Record<string, unknown> {
  const file = JSON.parse(readFileSync(path, 'utf8')) as { parameters: Record<string, { value: unknown }> };
  return Object.fromEntries(
    Object.entries(file.parameters).map(([name, { value }]) => {
      const type = types[name]?.type;
      if (!type) throw new Error(`${path}: parameter ${name} is not declared by the template`);
      return [name, typeof value === 'string' ? convert(substitute(value, environment), type) : value];
    }),
  );
}

function substitute(text: string, environment: Record<string, string>): string {
  return text.replace(/\$\{([A-Za-z0-9_]+)(?:=([^}]*))?\}/g, (_, name: string, fallback: string | undefined) => environment[name] ?? fallback ?? '');
}

function convert(text: string, type: string): unknown {
  if (type === 'bool' && /^(true|false)$/i.test(text)) return text.toLowerCase() === 'true';
  if (type === 'int' && /^-?\d+$/.test(text)) return Number(text);
  return text;
}
