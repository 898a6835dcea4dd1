// Fidelity: the official JavaScript client (@kubernetes/client-node) against kube-sim
// over TLS with a bearer token. makeInformer receives add/update/delete events; after a
// dropped stream it resumes from its resourceVersion; after a 410 it re-lists and the
// re-list removes objects deleted while it was not watching.
//
//   node js_informer_test.mjs <path to kube-sim> <tests/js dir>
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import https from 'node:https';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { pathToFileURL } from 'node:url';

const [sim, jsdir] = process.argv.slice(2);
const k8s = await import(
  pathToFileURL(path.join(jsdir, 'node_modules/@kubernetes/client-node/dist/index.js')).href);

const DEADLINE_MS = 20000;
const TOKEN = 'js-fidelity';
let failures = 0;

function check(cond, what) {
  if (cond) {
    console.log(`ok: ${what}`);
  } else {
    failures += 1;
    console.log(`FAIL: ${what}`);
  }
}

// Waits for a condition with a generous deadline (never for a fixed time).
async function waitFor(what, cond) {
  const end = Date.now() + DEADLINE_MS;
  while (Date.now() < end) {
    if (cond()) return true;
    await new Promise((r) => setTimeout(r, 10));
  }
  check(false, `timed out waiting for ${what}`);
  throw new Error(`timed out waiting for ${what}`);
}

const work = mkdtempSync(path.join(tmpdir(), 'kube-sim-js-'));
const kubeconfig = path.join(work, 'kubeconfig');
const proc = spawn(sim, ['--tls', '--token', TOKEN, '--kubeconfig-out', kubeconfig],
  { stdio: ['ignore', 'pipe', 'inherit'] });
const url = await new Promise((resolve, reject) => {
  const rl = createInterface({ input: proc.stdout });
  rl.once('line', (line) => {
    if (line.startsWith('kube-sim listening on ')) resolve(line.split(' ').pop());
    else reject(new Error(`kube-sim did not start: ${line}`));
  });
  proc.once('exit', (code) => reject(new Error(`kube-sim exited with ${code}`)));
});

const kc = new k8s.KubeConfig();
kc.loadFromFile(kubeconfig);
const ca = Buffer.from(kc.getCurrentCluster().caData, 'base64');
const core = kc.makeApiClient(k8s.CoreV1Api);

function admin(method, p, body) {
  return new Promise((resolve, reject) => {
    const req = https.request(new URL(p, url), { method, ca }, (res) => {
      let data = '';
      res.on('data', (c) => { data += c; });
      res.on('end', () => resolve(JSON.parse(data)));
    });
    req.on('error', reject);
    if (body) req.write(JSON.stringify(body));
    req.end();
  });
}

const cm = (name) => ({ metadata: { name, labels: { app: 'js' } }, data: { k: 'v' } });
const ns = 'default';

let informer;
try {
  await core.createNamespacedConfigMap({ namespace: ns, body: cm('a') });
  await core.createNamespacedConfigMap({ namespace: ns, body: cm('b') });
  await core.createNamespacedConfigMap({ namespace: ns, body: { metadata: { name: 'other' } } });

  const events = [];
  let connects = 0;
  const errors = [];
  informer = k8s.makeInformer(kc, '/api/v1/namespaces/default/configmaps',
    () => core.listNamespacedConfigMap({ namespace: ns, labelSelector: 'app=js' }), 'app=js');
  for (const verb of ['add', 'update', 'delete']) {
    informer.on(verb, (obj) => events.push(`${verb} ${obj.metadata.name}`));
  }
  informer.on('connect', () => { connects += 1; });
  informer.on('error', (err) => errors.push(err));
  const lists = async () => (await admin('GET', '/admin/stats')).requests.by_verb.list ?? 0;
  const names = () => informer.list(ns).map((o) => o.metadata.name).sort().join(',');

  await informer.start();
  await waitFor('the initial list', () => events.includes('add a') && events.includes('add b'));
  check(!events.includes('add other'), 'the label selector is applied');

  // update and delete while watching
  await core.patchNamespacedConfigMap({ namespace: ns, name: 'a', body: { data: { k: 'w' } } },
    k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch));
  await waitFor('update a', () => events.includes('update a'));
  check(informer.get('a', ns).data.k === 'w', 'the cache holds the updated object');
  await core.deleteNamespacedConfigMap({ namespace: ns, name: 'b' });
  await waitFor('delete b', () => events.includes('delete b'));

  // A dropped stream: the informer reconnects from its resourceVersion, no re-list.
  const listsBefore = await lists();
  const connectsBefore = connects;
  await admin('POST', '/admin/faults', { close_watch_after: 1 });
  await core.createNamespacedConfigMap({ namespace: ns, body: cm('c') });
  await waitFor('add c', () => events.includes('add c'));
  await waitFor('the informer to reconnect', () => connects > connectsBefore);
  await admin('POST', '/admin/faults', { reset: true });
  await core.createNamespacedConfigMap({ namespace: ns, body: cm('d') });
  await waitFor('add d after the reconnect', () => events.includes('add d'));
  check((await lists()) === listsBefore, 'a dropped stream resumes without re-listing');

  // A stalled stream misses a deletion; then a 410 makes the informer re-list, and the
  // re-list removes the object deleted meanwhile.
  await admin('POST', '/admin/faults', { stall_watch_after: 1 });
  await core.createNamespacedConfigMap({ namespace: ns, body: cm('e') });
  await waitFor('add e', () => events.includes('add e'));
  await core.deleteNamespacedConfigMap({ namespace: ns, name: 'a' });
  const listsBeforeGone = await lists();
  await admin('POST', '/admin/faults', { stall_watch_after: null, expire_watches: true });
  await waitFor('delete a after the re-list', () => events.includes('delete a'));
  check((await lists()) === listsBeforeGone + 1, 'the 410 made the informer re-list once');
  await core.createNamespacedConfigMap({ namespace: ns, body: cm('f') });
  await waitFor('add f after the re-list', () => events.includes('add f'));

  const server = await core.listNamespacedConfigMap({ namespace: ns, labelSelector: 'app=js' });
  const serverNames = server.items.map((o) => o.metadata.name).sort().join(',');
  check(names() === serverNames, `the informer cache equals the server (${names()} vs ${serverNames})`);
  check(errors.length === 0, `no informer errors (${errors.map(String).join('; ')})`);
  const stats = await admin('GET', '/admin/stats');
  check(stats.faults.close_watch_after === 1 && stats.faults.expire_watches >= 1,
    'kube-sim counted the injected faults');
} catch (err) {
  failures += 1;
  console.log(`FAIL: ${err.stack || err}`);
} finally {
  if (informer) await informer.stop();
  proc.kill('SIGTERM');
  rmSync(work, { recursive: true, force: true });
}

if (failures > 0) {
  console.log(`${failures} check(s) failed`);
  process.exit(1);
}
console.log('PASS: JavaScript client fidelity');
process.exit(0);
