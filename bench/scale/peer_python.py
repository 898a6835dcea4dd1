#!/usr/bin/python3
"""The Python peer of the scale benchmark: the official client (Debian's
python3-kubernetes) listing and watching ServiceMonitors, PodMonitors, Probes and
Secrets into dicts, as a user of that client writes it: CoreV1Api for Secrets (typed
V1Secret models), CustomObjectsApi for the monitors (plain dicts), lists paged with
limit=500, then watch.Watch().stream from the list's resourceVersion, one thread per
kind (the client has no informer).

    /usr/bin/python3 peer_python.py KUBECONFIG

Prints "synced <objects>" once every kind is listed and its watch started, then
"events <n>" (watch events handled since) every 50 ms while it changes. The driver
(bench/scale/scale.py) times the lines and reads RSS and CPU from /proc.
"""
import signal
import sys
import threading
import time

from kubernetes import client, config, watch

KINDS = [("monitoring.coreos.com", "v1", "servicemonitors"),
         ("monitoring.coreos.com", "v1", "podmonitors"),
         ("monitoring.coreos.com", "v1", "probes"),
         (None, "v1", "secrets")]


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: peer_python.py KUBECONFIG")
    config.load_kube_config(config_file=sys.argv[1])
    core = client.CoreV1Api()
    custom = client.CustomObjectsApi()
    caches = {}
    lock = threading.Lock()
    counter = {"events": 0}
    started = threading.Barrier(len(KINDS) + 1)
    failed = []

    def list_fn(group, version, plural):
        if group is None:
            return core.list_secret_for_all_namespaces
        return lambda **kw: custom.list_cluster_custom_object(group, version, plural, **kw)

    def key_of(obj):
        if isinstance(obj, dict):
            m = obj["metadata"]
            return m.get("namespace", ""), m["name"]
        return obj.metadata.namespace, obj.metadata.name

    def meta(lst, field):
        if isinstance(lst, dict):
            return lst["metadata"].get(field)
        return getattr(lst.metadata, "_continue" if field == "continue" else "resource_version")

    def run(kind):
        group, version, plural = kind
        fn = list_fn(group, version, plural)
        cache = {}
        try:
            cont, rv = None, None
            while True:
                kw = {"limit": 500}
                if cont:
                    kw["_continue"] = cont
                page = fn(**kw)
                items = page["items"] if isinstance(page, dict) else page.items
                for obj in items:
                    cache[key_of(obj)] = obj
                rv = meta(page, "resourceVersion")
                cont = meta(page, "continue")
                if not cont:
                    break
            caches[plural] = cache
        except Exception as e:  # noqa: BLE001 - reported and fatal
            failed.append("%s: %s" % (plural, e))
            started.abort()
            return
        started.wait()
        w = watch.Watch()
        try:
            for ev in w.stream(fn, resource_version=rv, allow_watch_bookmarks=True,
                               timeout_seconds=3600):
                t, obj = ev["type"], ev["object"]
                if t == "DELETED":
                    cache.pop(key_of(obj), None)
                elif t in ("ADDED", "MODIFIED"):
                    cache[key_of(obj)] = obj
                else:
                    continue
                with lock:
                    counter["events"] += 1
        except Exception as e:  # noqa: BLE001
            print("peer_python: watch of %s ended: %s" % (plural, e), file=sys.stderr)

    for k in KINDS:
        threading.Thread(target=run, args=(k,), daemon=True).start()
    try:
        started.wait()
    except threading.BrokenBarrierError:
        sys.exit("peer_python: " + "; ".join(failed))
    print("synced %d" % sum(len(c) for c in caches.values()), flush=True)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    last = 0
    while True:
        time.sleep(0.05)
        with lock:
            n = counter["events"]
        if n != last:
            last = n
            print("events %d" % n, flush=True)


if __name__ == "__main__":
    main()
