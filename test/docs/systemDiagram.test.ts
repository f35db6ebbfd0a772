import { readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

/** The mermaid block of docs/architecture.md's "The whole system" section. */
function systemDiagram(): string {
  const architecture = readFileSync('docs/architecture.md', 'utf8');
  const section = architecture.slice(architecture.indexOf('## The whole system'));
  return /```mermaid\n([\s\S]*?)```/.exec(section)?.[1] ?? '';
}

interface Entities {
  queues: Record<string, unknown>;
  topics: Record<string, { subscriptions: Record<string, unknown> }>;
}

describe('the whole-system diagram (docs/architecture.md)', () => {
  const diagram = systemDiagram();

  it('shows every function the app registers', () => {
    const functions = readdirSync('functions')
      .filter((f) => f.endsWith('.ts'))
      .map((f) => f.replace(/\.ts$/, ''));
    expect(functions).toHaveLength(7);
    for (const name of functions) expect(diagram, `functions/${name}.ts`).toMatch(new RegExp(`\\[${name}<br/>`));
  });

  it('shows every queue, topic and subscription the templates create', () => {
    const entities = JSON.parse(readFileSync('infra/servicebus-queues.json', 'utf8')) as Entities;
    const names = [
      ...Object.keys(entities.queues).map((q) => `queue ${q}`),
      ...Object.entries(entities.topics).flatMap(([topic, { subscriptions }]) => [
        `topic ${topic}`,
        ...Object.keys(subscriptions).map((s) => `subscription ${s}`),
      ]),
    ];
    expect(names.length).toBeGreaterThanOrEqual(4);
    for (const name of names) expect(diagram).toContain(name);
  });

  it('shows the change feed and the carrier', () => {
    expect(diagram).toContain('change feed');
    expect(diagram).toContain('Carrier API');
  });
});
