import { describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { ConfigMap, Secret, Service } from 'kubernetes-models/v1';
import { Job } from 'kubernetes-models/batch/v1';
import { benchConfigFromFlags } from '../../../src/cli/run-options.js';
import { k8sManifests, manifestsYaml, shellWord, slurmScript } from '../../../src/core/distributed/launchers.js';

// The manifests are checked against Kubernetes' own OpenAPI schema as the kubernetes-models package ships it (built
// from Kubernetes v1.27; no network): each object by its apiVersion and kind.
const MODELS: Record<string, new (data: never) => { validate(): void }> = {
  'v1/Secret': Secret,
  'v1/ConfigMap': ConfigMap,
  'v1/Service': Service,
  'batch/v1/Job': Job,
};

function validate(doc: Record<string, unknown>): void {
  const Model = MODELS[`${String(doc.apiVersion)}/${String(doc.kind)}`];
  if (!Model) throw new Error(`no schema for ${String(doc.apiVersion)} ${String(doc.kind)}`);
  new Model(doc as never).validate();
}

const config = benchConfigFromFlags({ url: 'http://router:8000', concurrency: '256,1024' }, {});
const base = { name: 'bench', workers: 8, image: 'registry/servebench:1', holdS: 3600, config, files: {} };

describe('servebench k8s', () => {
  it("prints an Indexed Job, a headless Service, a ConfigMap and a Secret that Kubernetes' schema accepts", () => {
    const docs = parseAllDocuments(
      manifestsYaml(k8sManifests({ ...base, cpu: '4', memory: '8Gi', namespace: 'perf' })),
    ).map((d) => d.toJS() as Record<string, unknown>);
    expect(docs.map((d) => d.kind)).toEqual(['Secret', 'ConfigMap', 'Service', 'Job']);
    for (const d of docs) validate(d);
    const job = docs[3] as {
      spec: Record<string, unknown> & {
        template: { spec: { subdomain: string; containers: Array<{ env: Array<{ name: string; value?: string }> }> } };
      };
    };
    expect(job.spec).toMatchObject({ completionMode: 'Indexed', completions: 8, parallelism: 8, backoffLimit: 0 });
    expect(job.spec.template.spec.subdomain).toBe('bench');
    const env = Object.fromEntries(job.spec.template.spec.containers[0]!.env.map((e) => [e.name, e.value]));
    expect(env).toMatchObject({ SERVEBENCH_WORLD_SIZE: '8', SERVEBENCH_COORDINATOR: 'bench-0.bench:29517' });
    expect((docs[2] as { spec: { clusterIP: string } }).spec.clusterIP).toBe('None');
  });

  it('puts a results claim in every pod when given, and never an API key in the ConfigMap', () => {
    const docs = k8sManifests({ ...base, resultsPvc: 'runs-rwx' });
    for (const d of docs) validate(d);
    expect(JSON.stringify(docs[3])).toContain('"claimName":"runs-rwx"');
    const keyed = benchConfigFromFlags({ url: 'http://router:8000', 'api-key': 'sk-secret' }, {});
    expect(() => k8sManifests({ ...base, config: keyed })).toThrow(/--api-key-secret NAME/);
    expect(JSON.stringify(k8sManifests({ ...base, config: keyed, apiKeySecret: 'router-key' }))).not.toContain(
      'sk-secret',
    );
  });

  it('would be caught by the schema if it were wrong', () => {
    const job = k8sManifests(base)[3] as { spec: Record<string, unknown> };
    expect(() => validate({ ...job, spec: { ...job.spec, completions: '8' } })).toThrow(/completions must be integer/);
  });

  it('refuses a name that is no DNS label', () => {
    expect(() => k8sManifests({ ...base, name: 'Bench_1' })).toThrow(/must be a DNS label/);
  });
});

describe('servebench slurm', () => {
  it('prints an sbatch script whose tasks each run the same distributed benchmark', () => {
    const script = slurmScript({
      nodes: 4,
      tasksPerNode: 1,
      jobName: 'sb',
      partition: 'gpu',
      runArgs: ['--url', 'http://r:8000', '--label', "it's"],
    });
    expect(script).toContain('#SBATCH --nodes=4');
    expect(script).toContain('#SBATCH --partition=gpu');
    expect(script).toContain(
      `srun --kill-on-bad-exit=0 servebench run --distributed --url http://r:8000 --label 'it'\\''s'`,
    );
    expect(shellWord('a b')).toBe("'a b'");
  });
});
