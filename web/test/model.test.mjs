// What the dashboard computes from the API's documents (src/js/model.js) and how it words
// requests (src/js/dom.js), with Node's test runner: `npm test` in web/, or ctest -L unit.

import assert from 'node:assert/strict';
import { test } from 'node:test';

import {
  byModel, fragmentation, reasonClass, migSlices, migIndex, shareOf, useByModel, toSeries, fieldOf,
  splitCommand, imageShort, runtimeText, bytesText, historySeries, latestOf,
} from '../src/js/model.js';
import { requestText, placementText, hours, utilColour } from '../src/js/dom.js';

const gpu = (index, model, allocated, extra = {}) => ({ index, model, memory_mib: 15360, allocated_milli: allocated,
  utilization: null, holders: [], ...extra });

test('byModel: allocation, free compute and fragmentation per model; drained GPUs are out of service', () => {
  const nodes = [
    { name: 'a', gpus: [gpu(0, 'T4', 500), gpu(1, 'T4', 0), gpu(2, 'T4', 1000), gpu(3, 'T4', 250, { drained: { reason: 'x' } })] },
    { name: 'b', gpus: [gpu(0, 'A100', 0, { utilization: 50 }), gpu(1, 'A100', 1000, { utilization: 100 })] },
  ];
  const [a100, t4] = byModel(nodes);
  assert.equal(a100.model, 'A100');
  assert.equal(a100.total, 2);
  assert.equal(a100.alloc, 1);
  assert.equal(a100.util / a100.utilN, 75);
  assert.equal(fragmentation(a100), 0); // the free compute is a whole GPU
  assert.equal(t4.total, 4);
  assert.equal(t4.service, 3);
  assert.equal(t4.drained, 1);
  assert.equal(t4.alloc, 1.75); // drained GPUs still count what they hold
  assert.equal(t4.free, 1.5); // 0.5 + 1 of the GPUs in service
  assert.ok(Math.abs(fragmentation(t4) - (0.5 / 1.5) * 100) < 1e-9);
  assert.equal(fragmentation({ free: 0, stranded: 0 }), 0);
});

test('reasonClass: the text before the first colon', () => {
  assert.equal(reasonClass('quota: tenant team-a uses 16 of 16 A100-80GB'), 'quota');
  assert.equal(reasonClass('gang: needs 3 replicas of 4 free GPUs; room for 2'), 'gang');
  assert.equal(reasonClass(''), 'waiting');
  assert.equal(reasonClass(null), 'waiting');
});

test('migSlices: memory slices out of 8 by profile and GPU memory', () => {
  assert.equal(migSlices('1g.10gb', 81559), 1);
  assert.equal(migSlices('1g.20gb', 81920), 2);
  assert.equal(migSlices('3g.40gb', 81559), 4);
  assert.equal(migSlices('7g.80gb', 81559), 8);
  assert.equal(migSlices('1g.5gb', 40960), 1);
  assert.equal(migSlices('3g.20gb', 40960), 4);
  assert.equal(migSlices('7g.40gb', 40960), 8);
  assert.equal(migSlices('nonsense', 40960), 1);
});

test('migIndex and shareOf: where MIG instances sit, and what shares count for', () => {
  const jobs = [{ id: 4, tenant: 't', placement: [{ node: 'n', replica: 0, gpus: [
    { index: 0, model: 'H100', milli: 0, mig_profile: '3g.40gb', mig_start: 4 }] }] },
  { id: 5, tenant: 't', placement: [{ node: 'n', replica: 1, gpus: [{ index: 1, model: 'H100', milli: 500 }] }] }];
  const idx = migIndex(jobs);
  assert.equal(idx.size, 1);
  assert.equal(idx.get('n/0/4/0').mig_start, 4);
  assert.equal(shareOf({ mig_profile: '1g.10gb' }), 1 / 7);
  assert.equal(shareOf({ milli: 250 }), 0.25);
  assert.equal(shareOf({ milli: 1000 }), 1);
  const use = useByModel(jobs);
  assert.ok(Math.abs(use.get('t').get('H100') - (3 / 7 + 0.5)) < 1e-9);
});

test('toSeries: one series per key, a value per period, null where a key has none', () => {
  const report = { rows: [
    { key: 'a', period_start: '2024-05-01T00:00:00Z', gpu_hours: 2, cost: '1.50' },
    { key: 'a', period_start: '2024-05-02T00:00:00Z', gpu_hours: 3, cost: '2.00' },
    { key: 'b', period_start: '2024-05-02T00:00:00Z', gpu_hours: 1, cost: null },
  ] };
  const { xs, series } = toSeries(report, 'gpu_hours');
  assert.deepEqual(xs, [Date.UTC(2024, 4, 1) / 1000, Date.UTC(2024, 4, 2) / 1000]);
  assert.deepEqual(series, [{ label: 'a', values: [2, 3] }, { label: 'b', values: [null, 1] }]);
  assert.deepEqual(toSeries(report, 'cost').series[0].values, [1.5, 2]);
  assert.deepEqual(toSeries(report, 'cost').series[1].values, [null, null]);
});

test('fieldOf: the form field an API error message names', () => {
  const paths = new Set(['name', 'tenant', 'queue', 'resources', 'resources.gpu_milli', 'resources.gpu_models', 'command', 'env']);
  assert.equal(fieldOf('resources.gpu_milli: must be between 1 and 1000', paths), 'resources.gpu_milli');
  assert.equal(fieldOf('resources.gpu_models[1]: unknown model', paths), 'resources.gpu_models');
  assert.equal(fieldOf('resources.gpu_mili: unknown field', paths), 'resources');
  assert.equal(fieldOf('env.CUDA_VISIBLE_DEVICES: set by gpupool', paths), 'env');
  assert.equal(fieldOf('command: required', paths), 'command');
  assert.equal(fieldOf('tenant team-b: not found', paths), 'tenant');
  assert.equal(fieldOf('queue: research does not exist', paths), 'queue');
  assert.equal(fieldOf('body: line 1, column 12: string expected', paths), null);
  assert.equal(fieldOf('', paths), null);
});

test('splitCommand: words as a shell splits them, without expansion', () => {
  assert.deepEqual(splitCommand('python train.py --epochs 3'), ['python', 'train.py', '--epochs', '3']);
  assert.deepEqual(splitCommand(`sh -c 'echo "a b"; sleep 1'`), ['sh', '-c', 'echo "a b"; sleep 1']);
  assert.deepEqual(splitCommand('echo "x \\"y\\"" z\\ w $HOME'), ['echo', 'x "y"', 'z w', '$HOME']);
  assert.deepEqual(splitCommand("a '' b"), ['a', '', 'b']);
  assert.deepEqual(splitCommand('   '), []);
  assert.throws(() => splitCommand('echo "open'), /unterminated/);
});

test('requestText and placementText word what a job asks for and where it runs', () => {
  assert.equal(requestText({ resources: { gpus: 2 } }), '2 GPUs');
  assert.equal(requestText({ resources: { gpu_milli: 500 } }), '0.5 GPU');
  assert.equal(requestText({ resources: { mig_profile: '1g.10gb' }, replicas: 3 }), '3 × MIG 1g.10gb');
  assert.equal(requestText({ resources: {} }), 'CPU only');
  assert.equal(placementText({ placement: [{ node: 'n1', gpus: [{ index: 0, milli: 500 }] },
    { node: 'n2', gpus: [{ index: 1, milli: 1000 }, { index: 2, milli: 0, mig_profile: '1g.10gb' }] }] }),
  'n1 GPU 0 (500m); n2 GPU 1, 2 (1g.10gb)');
});

test('hours and utilColour: small amounts stay visible; busy GPUs are darker, with readable text', () => {
  assert.equal(hours(0), '0');
  assert.notEqual(hours(0.0004), '0');
  assert.equal(utilColour(null).bg, '');
  const idle = utilColour(0);
  const busy = utilColour(100);
  assert.notEqual(idle.bg, busy.bg);
  assert.equal(idle.fg, '#111');
  assert.equal(busy.fg, '#fff');
});

test('imageShort: Docker Hub prefixes dropped, digests cut, long references cut at their path, as the CLI', () => {
  assert.equal(imageShort(undefined), '');
  assert.equal(imageShort(''), '');
  assert.equal(imageShort('docker.io/library/ubuntu:22.04'), 'ubuntu:22.04');
  assert.equal(imageShort('docker.io/pytorch/pytorch:2.1.0'), 'pytorch/pytorch:2.1.0');
  assert.equal(imageShort('localhost/gpupool-demo:1'), 'localhost/gpupool-demo:1');
  assert.equal(imageShort('docker.iox/a:1'), 'docker.iox/a:1');
  assert.equal(imageShort(`docker.io/library/img@sha256:0123456789abcdef${'0'.repeat(48)}`), 'img@sha256:0123456789ab');
  const long = 'registry.example.com:5000/ml-platform/team-a/pytorch:2.1';
  assert.equal(imageShort(long, 56), long);
  assert.equal(imageShort(long, 40), '.../ml-platform/team-a/pytorch:2.1');
  assert.equal(imageShort(long, 30), '.../team-a/pytorch:2.1');
  assert.equal(imageShort('nvcr.io/nvidia/pytorch:23.10-py3-cuda12.2-cudnn8-devel-ubuntu22.04'),
    '.../pytorch:23.10-py3-cuda12.2-cudnn8...');
  assert.equal(imageShort('averyveryveryveryverylongimagenamewithoutanyslash:1', 20), 'averyveryveryvery...');
  for (const max of [16, 20, 30, 40]) assert.ok(imageShort(`${'x'.repeat(30)}/${'y'.repeat(60)}:1`, max).length <= max);
});

test('runtimeText and bytesText: a node\'s container runtime and image sizes in words', () => {
  assert.equal(runtimeText({ engine: 'podman', version: '4.3.1', oci_runtime: 'runc', cgroups: 'hybrid' }),
    'podman 4.3.1 (runc, cgroups hybrid)');
  assert.equal(runtimeText(null), null);
  assert.equal(runtimeText(undefined), null);
  assert.equal(bytesText(0), '0');
  assert.equal(bytesText(undefined), '0');
  assert.equal(bytesText(999), '999 B');
  assert.equal(bytesText(1840000), '1.8 MB');
  assert.equal(bytesText(3405000000), '3.4 GB');
});

test('historySeries and latestOf: a job history as chart series, the job first, gaps kept', () => {
  const doc = {
    times: [600, 610, 620], step_s: 10,
    series: [
      { metric: 'gpu_util', unit: 'percent', replica: 1, mean: [null, 80, 80], min: [null, 80, 80], max: [null, 80, 80] },
      { metric: 'gpu_util', unit: 'percent', mean: [null, 60, null], min: [null, 40, null], max: [null, 80, null] },
      { metric: 'gpu_util', unit: 'percent', replica: 0, mean: [null, 40, 40], min: [null, 40, 40], max: [null, 40, 40] },
      { metric: 'gpu_mem_mib', unit: 'MiB', mean: [null, null, null], min: [null, null, null], max: [null, null, null] },
    ],
  };
  const { xs, series } = historySeries(doc, 'gpu_util');
  assert.deepEqual(xs, [600, 610, 620]);
  assert.deepEqual(series.map((s) => s.label), ['Job', 'Replica 0', 'Replica 1']);
  assert.deepEqual(series[0].values, [null, 60, null]);
  assert.deepEqual(latestOf(doc, 'gpu_util'), { t: 610, value: 60, min: 40, max: 80 });
  assert.equal(latestOf(doc, 'gpu_mem_mib'), null);
  assert.equal(latestOf(doc, 'gpu_mem_util'), null);
  assert.deepEqual(historySeries({}, 'gpu_util'), { xs: [], series: [] });
});
