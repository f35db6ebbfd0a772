import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildEnvironment, lockDrift, registryUnreachable, runStep } from './packagedAppBuild.js';
import type { StepResult } from './packagedAppBuild.js';
import { copyFiles, deploymentPackageFiles, excludedBy, filesBeyondTheBuild, neededSourceFile, tsconfigInclude } from './packagedAppFiles.js';

// The package `azd deploy` uploads (azure.yaml: remoteBuild), built as Azure builds it and loaded as
// the worker loads it. On Flex Consumption a remote build is an Oryx build of the uploaded folder
// (`oryx build /tmp/zipdeploy/extracted --platform nodejs`, as the deployment log quoted in
// Azure/functions-action#238 shows). For an npm project Oryx runs `npm install` (devDependencies
// included unless PRUNE_DEV_DEPENDENCIES is set), then `npm run build` when package.json has a build
// script: microsoft/Oryx doc/runtimes/nodejs.md ("Build"), NodeConstants.NpmPackageInstallCommand.
// So `npm install` here, not `npm ci`; the lock check below stands in for ci's strictness.

const repoRoot = process.cwd();
const funcignore = readFileSync(join(repoRoot, '.funcignore'), 'utf8');
const packaged = deploymentPackageFiles(repoRoot, funcignore);
const theSevenFunctions = ['processOrder', 'publishOutbox', 'reconcileShipments', 'requestShipment', 'submitOrder', 'sweepOutbox', 'sweepParkedItems'];
const installArgs = ['install', '--prefer-offline', '--no-audit', '--no-fund'];
const minutes = 60_000;

describe('the deployment package: what .funcignore keeps, read with gitignore rules as azd reads it', () => {
  it("leaves out local settings and .env files wherever they are, and the stand-ins' folder", () => {
    const mustNotShip = [
      'local.settings.json',
      '.env',
      '.env.local',
      '.env.production',
      'src/.env',
      'functions/.env.test',
      '.azure/dev/.env',
      'emulators/',
      'emulators/servicebus-emulator/package.json',
    ];
    expect(mustNotShip.filter((path) => !excludedBy(funcignore, path))).toEqual([]);
  });

  it('holds only what the remote build compiles and installs from: no development folder, whatever its name', () => {
    expect(filesBeyondTheBuild(packaged, tsconfigInclude(repoRoot))).toEqual([]);
    expect(packaged).toEqual(expect.arrayContaining(['host.json', 'package.json', 'package-lock.json', 'tsconfig.json']));
  });

  it('would report a stand-in, a test or a stray file that .funcignore let through', () => {
    const leaked = [
      'dev/host/functionsCore.ts',
      'emulators/cosmos-emulator/src/server.ts',
      'test/unit/a.test.ts',
      'notes.md',
      'src/a.ts',
      'functions/b.ts',
      'package.json',
    ];
    expect(filesBeyondTheBuild(leaked, ['functions/**/*.ts', 'src/**/*.ts'])).toEqual([
      'dev/host/functionsCore.ts',
      'emulators/cosmos-emulator/src/server.ts',
      'test/unit/a.test.ts',
      'notes.md',
    ]);
  });

  it('would report an install that resolved a package anew or at another version than the lock pins', () => {
    const pinned = {
      packages: {
        '': { version: '0.1.0' },
        'node_modules/zod': { version: '4.6.7' },
        'node_modules/long': { version: '5.3.2' },
        'emulators/servicebus-emulator': { version: '0.1.0' },
      },
    };
    // The root entry (npm rewrites its "bin"), a workspace left out of the package and a package moved in the tree are not drift.
    const installed = {
      packages: {
        '': { version: '0.1.1' },
        'node_modules/zod': { version: '4.7.0' },
        'node_modules/a/node_modules/long': { version: '5.3.2' },
        'node_modules/left-pad': { version: '1.3.0' },
      },
    };
    expect(lockDrift(pinned, installed)).toEqual(['zod@4.7.0 is not pinned by the lock', 'left-pad@1.3.0 is not pinned by the lock']);
  });
});

// Azure builds the package on the Node version the Function App is configured with; the build is
// reproduced on that version only (CI's second pass, on Node 24, would repeat minutes of install for
// a build Azure never runs).
const azuresNode = /runtime: \{ name: 'node', version: '(\d+)' \}/.exec(readFileSync(join(repoRoot, 'infra/modules/functionApp.bicep'), 'utf8'))?.[1];
const thisNode = process.versions.node.split('.')[0];
const unreachable = azuresNode === thisNode ? registryUnreachable() : undefined;
if (azuresNode !== thisNode)
  console.log(`Packaged-app build: skipped because Azure builds the app on Node ${azuresNode} (infra/modules/functionApp.bicep) and this is Node ${thisNode}`);
if (unreachable) console.log(`Packaged-app build: skipped because npm cannot reach its registry (${unreachable})`);

describe("the Function App's Node version, which the package is built on", () => {
  it('is named in infra/modules/functionApp.bicep', () => {
    expect(azuresNode).toMatch(/^\d+$/);
  });
});

describe.runIf(azuresNode === thisNode && !unreachable)(
  "the package built as Azure's remote build builds it (npm install, npm run build) and loaded as the worker loads it",
  () => {
    const workDirs: string[] = [];
    const newWorkDir = () => {
      const dir = mkdtempSync(join(tmpdir(), 'packaged-app-'));
      workDirs.push(dir);
      return dir;
    };
    let appRoot = '';
    let install: StepResult;
    let build: StepResult | undefined;
    let load: StepResult | undefined;

    beforeAll(async () => {
      appRoot = newWorkDir();
      copyFiles(packaged, repoRoot, appRoot);
      const env = buildEnvironment();
      install = await runStep('npm', installArgs, { cwd: appRoot, env });
      if (install.exitCode === 0) build = await runStep('npm', ['run', 'build'], { cwd: appRoot, env });
      if (build?.exitCode === 0)
        load = await runStep(process.execPath, ['--import', 'tsx', join(repoRoot, 'test/infra/packagedAppLoader.ts'), appRoot], {
          cwd: repoRoot,
          env: { ...env, ...sampleSettings() },
        });
      console.log(`Packaged app (${packaged.length} files): npm install ${seconds(install)}, npm run build ${seconds(build)}, loading ${seconds(load)}`);
    }, 15 * minutes);

    // Half a gigabyte of node_modules takes one to two minutes to remove: a detached process does it,
    // so the suite does not wait for it.
    afterAll(() => {
      for (const dir of workDirs) spawn('rm', ['-rf', dir], { detached: true, stdio: 'ignore' }).unref();
    });

    it('installs from the lock file exactly what it pins: nothing resolved anew, nothing at another version', () => {
      expect(install.exitCode, tail(install)).toBe(0);
      const lock = (root: string) => JSON.parse(readFileSync(join(root, 'package-lock.json'), 'utf8')) as Parameters<typeof lockDrift>[0];
      expect(lockDrift(lock(repoRoot), lock(appRoot))).toEqual([]);
    });

    it('compiles with `npm run build`', () => {
      expect(build?.exitCode, build ? tail(build) : `not built: ${tail(install)}`).toBe(0);
    });

    it('registers the project\'s seven functions with @azure/functions, from the files package.json "main" names', () => {
      expect(load?.exitCode, load ? tail(load) : 'not loaded: the build failed').toBe(0);
      const registered = JSON.parse(load?.output.trim().split('\n').at(-1) ?? '{}') as Record<string, string[]>;
      expect(
        Object.entries(registered).filter(([, names]) => names.length === 0),
        'a file "main" names that registers nothing',
      ).toEqual([]);
      expect(Object.values(registered).flat().sort()).toEqual(theSevenFunctions);
    });

    it(
      'does not build when .funcignore leaves out a source file the functions import',
      async () => {
        expect(install.exitCode, tail(install)).toBe(0);
        const missing = neededSourceFile(packaged, repoRoot);
        const incomplete = newWorkDir();
        const files = deploymentPackageFiles(repoRoot, `${funcignore}\n${missing.file}\n`);
        expect(files).not.toContain(missing.file);
        copyFiles(files, repoRoot, incomplete);
        // The same installed dependencies: only the sources differ from the package that built.
        symlinkSync(join(appRoot, 'node_modules'), join(incomplete, 'node_modules'), 'dir');
        const failed = await runStep('npm', ['run', 'build'], { cwd: incomplete, env: buildEnvironment() });
        expect(failed.exitCode).not.toBe(0);
        expect(failed.output).toContain(`Cannot find module '${missing.specifier}'`);
      },
      10 * minutes,
    );
  },
);

/** The settings the app validates as it loads: the sample's (loading connects to nothing). */
function sampleSettings(): Record<string, string> {
  return (JSON.parse(readFileSync(join(repoRoot, 'local.settings.sample.json'), 'utf8')) as { Values: Record<string, string> }).Values;
}

const seconds = (step: StepResult | undefined) => (step ? `${Math.round(step.durationMs / 1000)} s` : 'not run');
const tail = (step: StepResult) => `${step.command} exited with ${step.exitCode}:\n${step.output.slice(-4000)}`;
