import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { registeredFunctions } from '../../emulators/functions-host/functionsCore.js';
import { parseNcrontab } from '../../emulators/functions-host/timerTriggers.js';

describe('sweepParkedItems registration (what the host receives)', () => {
  it('is a timer trigger on %PARKED_SWEEP_SCHEDULE%, not run on every start-up', async () => {
    await import('../../functions/sweepParkedItems.js');
    const fn = [...registeredFunctions()].reverse().find((f) => f.metadata.name === 'sweepParkedItems');
    expect(Object.values(fn?.metadata.bindings ?? {})).toEqual([
      {
        name: expect.stringMatching(/^timerTrigger/),
        type: 'timerTrigger',
        direction: 'in',
        schedule: '%PARKED_SWEEP_SCHEDULE%',
        runOnStartup: false,
        properties: { supportsDeferredBinding: 'false' },
      },
    ]);
  });

  it('has a valid schedule in local.settings.sample.json, which Core Tools reads', () => {
    const values = (JSON.parse(readFileSync('local.settings.sample.json', 'utf8')) as { Values: Record<string, string> }).Values;
    expect(() => parseNcrontab(values.PARKED_SWEEP_SCHEDULE ?? '', 'sweepParkedItems')).not.toThrow();
  });
});
