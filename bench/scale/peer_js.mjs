// The JavaScript peer of the scale benchmark: the official client's informer
// (@kubernetes/client-node makeInformer: list, then watch into its ObjectCache of full
// objects) for ServiceMonitors, PodMonitors, Probes and Secrets, as a user of that
// client writes it. The list functions page with limit=500 (as client-go's reflector,
// kubectl and the operator do) and hand the informer one list.
//
//   node peer_js.mjs CLIENT_NODE_INDEX_JS KUBECONFIG
//
// Prints "synced <objects>" once every informer has listed and started watching, then
// "events <n>" (watch events handled since) every 50 ms while it changes. The driver
// (bench/scale/scale.py) times the lines and reads RSS and CPU from /proc.
import { pathToFileURL } from 'node:url';

const [modulePath, kubeconfig] = process.argv.slice(2);
if (!modulePath || !kubeconfig) {
  console.error('usage: node peer_js.mjs CLIENT_NODE_INDEX_JS KUBECONFIG');
  process.exit(2);
}
const k8s = await import(pathToFileURL(modulePath).href);

const kc = new k8s.KubeConfig();
kc.loadFromFile(kubeconfig);
const core = kc.makeApiClient(k8s.CoreV1Api);
const custom = kc.makeApiClient(k8s.CustomObjectsApi);

// All pages of a list as one list object (what makeInformer's list function returns).
function paged(listPage) {
  return async () => {
    const items = [];
    let cont;
    let rv = '';
    do {
      const page = await listPage(cont);
      for (const item of page.items) items.push(item);
      cont = page.metadata?._continue ?? page.metadata?.continue;
      rv = page.metadata?.resourceVersion ?? rv;
    } while (cont);
    return { metadata: { resourceVersion: rv }, items };
  };
}

function customInformer(plural) {
  const group = 'monitoring.coreos.com';
  const version = 'v1';
  return k8s.makeInformer(
    kc,
    `/apis/${group}/${version}/${plural}`,
    paged((cont) =>
      custom.listClusterCustomObject({ group, version, plural, limit: 500, _continue: cont }),
    ),
  );
}

const informers = [
  customInformer('servicemonitors'),
  customInformer('podmonitors'),
  customInformer('probes'),
  k8s.makeInformer(
    kc,
    '/api/v1/secrets',
    paged((cont) => core.listSecretForAllNamespaces({ limit: 500, _continue: cont })),
  ),
];

let synced = false;
let events = 0;
for (const inf of informers) {
  inf.on('add', () => {
    if (synced) events++;
  });
  inf.on('update', () => events++);
  inf.on('delete', () => events++);
  inf.on('error', (err) => {
    // The informer does not retry by itself: a failure is the end of the run.
    console.error('peer_js: informer error:', err?.message ?? err);
    process.exit(1);
  });
}

await Promise.all(informers.map((inf) => inf.start()));
synced = true;
let objects = 0;
for (const inf of informers) objects += inf.list().length;
process.stdout.write(`synced ${objects}\n`);

let last = 0;
setInterval(() => {
  if (events !== last) {
    last = events;
    process.stdout.write(`events ${events}\n`);
  }
}, 50);
process.on('SIGTERM', () => process.exit(0));
