import { spawnSync } from 'node:child_process';
import { accessSync, constants, existsSync, readFileSync } from 'node:fs';
import { chmod, mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import type { RunRecord } from '../../src/shared/run-record.js';
import { exitAgrees, failedBeyondMachine } from '../fakes/run-checks.js';

const root = new URL('../..', import.meta.url).pathname;
const require = createRequire(import.meta.url);

interface BuilderConfig {
  productName: string;
  files: string[];
  linux: { target: string[]; executableName: string; icon: string; extraFiles: { from: string; to: string }[] };
  deb: { afterInstall: string; afterRemove: string };
  win: { target: string };
  mac: { target: string };
  [key: string]: unknown;
}
const config = parse(readFileSync(join(root, 'electron-builder.yml'), 'utf8')) as BuilderConfig;

/** electron-builder's own schema check (the one `electron-builder` runs before building). */
async function validate(c: unknown): Promise<void> {
  const { validateConfiguration } = require('app-builder-lib/out/util/config/config.js') as {
    validateConfiguration: (c: unknown, logger: unknown) => Promise<void>;
  };
  const { DebugLogger } = require('builder-util') as { DebugLogger: new (enabled: boolean) => unknown };
  await validateConfiguration(c, new DebugLogger(false));
}

/** A deb script as electron-builder writes it: its macros replaced, an unknown one an error (as there). */
function templated(file: string): string {
  const values: Record<string, string> = {
    executable: config.linux.executableName,
    sanitizedProductName: config.productName,
    productFilename: config.productName,
  };
  return readFileSync(join(root, file), 'utf8').replace(/\${([a-zA-Z]+)}/g, (_, name: string) => {
    if (!(name in values)) throw new Error(`${file}: macro ${name} is not defined`);
    return values[name]!;
  });
}

describe('electron-builder configuration', () => {
  it("passes electron-builder's own validation, and a wrong key fails it", async () => {
    await validate(config);
    await expect(validate({ ...config, linux: { ...config.linux, targett: 'deb' } })).rejects.toThrow(
      /configuration\.linux/,
    );
  });

  it('targets AppImage and deb on Linux, nsis on Windows, dmg on macOS, with an icon of at least 512 px', () => {
    expect(config.linux.target).toEqual(['AppImage', 'deb']);
    expect(config.win.target).toBe('nsis');
    expect(config.mac.target).toBe('dmg');
    const png = readFileSync(join(root, config.linux.icon));
    expect(png.subarray(1, 4).toString()).toBe('PNG');
    expect(png.readUInt32BE(16)).toBeGreaterThanOrEqual(512);
    expect(png.readUInt32BE(20)).toBeGreaterThanOrEqual(512);
  });

  it('writes deb scripts that are valid bash and link the CLI as `servebench`', () => {
    for (const file of [config.deb.afterInstall, config.deb.afterRemove]) {
      const res = spawnSync('bash', ['-n'], { input: templated(file), encoding: 'utf8' });
      expect(res.status, `${file}: ${res.stderr}`).toBe(0);
    }
    expect(templated(config.deb.afterInstall)).toContain("ln -sf '/opt/servebench/servebench-cli' /usr/bin/servebench");
    expect(templated(config.deb.afterRemove)).toContain('rm -f /usr/bin/servebench');
  });
});

// The Electron binary cannot be downloaded here: package the `dir` target around a stand-in "Electron" that is
// Node (what ELECTRON_RUN_AS_NODE makes the real one), then use the packaged app's CLI as the .deb would.
describe('the packaged app folder (electron-builder --linux dir, stand-in Electron)', () => {
  let tmp = '';
  let app = '';
  beforeAll(async () => {
    for (const built of ['out/main/index.js', 'out/renderer/index.html', 'dist/cli.js']) {
      expect(existsSync(join(root, built)), `${built} is missing: run npm run build`).toBe(true);
    }
    tmp = await mkdtemp(join(tmpdir(), 'sb-pack-'));
    const fakeElectron = join(tmp, 'electron-dist');
    await mkdir(fakeElectron);
    await writeFile(join(fakeElectron, 'electron'), `#!/bin/sh\nexec '${process.execPath}' "$@"\n`);
    await chmod(join(fakeElectron, 'electron'), 0o755);
    const res = spawnSync(
      process.execPath,
      [
        require.resolve('electron-builder/cli.js'),
        '--linux',
        'dir',
        `-c.electronDist=${fakeElectron}`,
        `-c.directories.output=${join(tmp, 'release')}`,
      ],
      { cwd: root, encoding: 'utf8', timeout: 600_000 },
    );
    expect(res.status, `${res.stdout}\n${res.stderr}`).toBe(0);
    app = join(tmp, 'release', 'linux-unpacked');
  }, 660_000);
  afterAll(async () => {
    if (tmp) await rm(tmp, { recursive: true, force: true });
  });

  it('holds the app, the CLI, the presets, the sim profiles and an executable fake nvidia-smi', async () => {
    const packaged = join(app, 'resources', 'app');
    for (const file of ['out/main/index.js', 'out/renderer/index.html', 'dist/cli.js', 'bin/servebench.js']) {
      expect(existsSync(join(packaged, file)), file).toBe(true);
    }
    expect(await readdir(join(packaged, 'resources', 'presets'))).toEqual(
      await readdir(join(root, 'resources', 'presets')),
    );
    expect(await readdir(join(packaged, 'resources', 'sim-profiles'))).toEqual(
      await readdir(join(root, 'resources', 'sim-profiles')),
    );
    accessSync(join(packaged, 'resources', 'fake-nvidia-smi'), constants.X_OK);
    accessSync(join(app, config.linux.executableName), constants.X_OK);
    accessSync(join(app, 'servebench-cli'), constants.X_OK);
    const pkg = JSON.parse(await readFile(join(packaged, 'package.json'), 'utf8')) as { name: string; version: string };
    const own = JSON.parse(await readFile(join(root, 'package.json'), 'utf8')) as { version: string };
    expect(pkg).toMatchObject({ name: 'servebench', version: own.version });
  });

  it('runs a simulator sweep through the installed CLI launcher, from the packaged files alone', async () => {
    const out = join(tmp, 'runs');
    const res = spawnSync(
      join(app, 'servebench-cli'),
      [
        'run',
        '--concurrency',
        '1',
        '--input-len',
        '64',
        '--output-len',
        '8',
        '--rounds',
        '2',
        '--requests-per-round',
        '4',
        '--warmup',
        '1',
        '--out',
        out,
      ],
      { cwd: tmp, encoding: 'utf8', timeout: 300_000 },
    );
    expect(res.stdout, res.stderr).toMatch(/SIMULATED/);
    const [dir] = await readdir(out);
    const record = JSON.parse(await readFile(join(out, dir!, 'run.json'), 'utf8')) as RunRecord;
    // A loaded machine may fail the client check (exit 1); nothing else may fail.
    expect(exitAgrees(res.status, record), res.stderr).toBe(true);
    expect(failedBeyondMachine(record)).toEqual([]);
    expect(record.status).toBe('completed');
  });
});
