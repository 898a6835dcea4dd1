#!/usr/bin/python3
"""Cache sync of two builds of the operator's k8s/ layer side by side, for before/after
figures on a shared machine: one kube-sim (scale.py's data set, HTTPS, bearer token),
then rounds of A, B and the JavaScript informer each syncing alone, interleaved so that
a change in the machine's load hits every client alike, and the floor (Boost.JSON
parsing the same LIST pages, saved once) in each round too. Prints each round and the
medians as a Markdown table.

  bench/scale/sync_ab.py --a BUILD_DIR --b BUILD_DIR [--rounds 5] [--scale 1]
                         [--metadata] [--no-js]

BUILD_DIR is a release build (cmake --preset release) with bench/scale_client and
bin/kube-sim built; kube-sim and the floor come from --a. Data sets are shared with
bench/scale/run.sh (build/bench/scale-data).
"""
import argparse
import atexit
import json
import os
import shutil
import statistics
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import scale  # noqa: E402


class BuildPeer(scale.ScaleClientPeer):
    """scale_client sync from a given build."""

    def __init__(self, key, binary, metadata):
        super().__init__(key, key, metadata)
        self.binary = binary

    def check(self):
        if not os.access(self.binary, os.X_OK):
            raise scale.Missing("%s not built" % self.binary)

    def start(self, ctx):
        argv = [self.binary, "sync", "--kubeconfig", ctx.sim.kubeconfig]
        if self.metadata:
            argv.append("--metadata-secrets")
        return [scale.Proc(self.key, argv, ctx.run_dir)]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--a", required=True, help="release build directory of A (before)")
    ap.add_argument("--b", required=True, help="release build directory of B (after)")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--scale", type=float, default=1.0)
    ap.add_argument("--metadata", action="store_true", help="Secrets metadata-only")
    ap.add_argument("--no-js", action="store_true", help="leave the JavaScript informer out")
    a = ap.parse_args()
    # What scale.py's helpers read from its arguments.
    scale.ARGS = argparse.Namespace(sync_timeout=900,
                                    scale_client=os.path.join(a.a, "bench", "scale_client"))
    atexit.register(scale.stop_all)

    out_dir = os.path.join(scale.ROOT, "build", "bench")
    run_dir = os.path.join(out_dir, "sync-ab-run")
    shutil.rmtree(run_dir, ignore_errors=True)
    os.makedirs(run_dir)
    data_dir, summary = scale.prepare_data(a.scale, os.path.join(out_dir, "scale-data"))
    ctx = scale.Ctx()
    ctx.run_dir, ctx.summary = run_dir, summary
    ctx.sim = scale.Sim(os.path.join(a.a, "bin", "kube-sim"), data_dir, run_dir, 10000)
    ctx.counts = {}
    objects = ctx.sim.stats()["objects"]

    peers = [BuildPeer("A", os.path.join(a.a, "bench", "scale_client"), a.metadata),
             BuildPeer("B", os.path.join(a.b, "bench", "scale_client"), a.metadata)]
    if not a.no_js:
        js = scale.JsPeer("js", "JavaScript")
        js.check()
        peers.append(js)
    figs = {p.key: [] for p in peers}
    pages_dir = os.path.join(run_dir, "pages")
    os.makedirs(pages_dir)
    pages, page_bytes = ctx.sim.save_pages(pages_dir)
    floors = []
    for r in range(a.rounds):
        res = subprocess.run([os.path.join(a.a, "bench", "scale_client"), "floor"] + pages,
                             capture_output=True, text=True, check=True)
        floors.append(json.loads(res.stdout)["parse_cpu_seconds"])
        for p in peers:
            fig, procs = scale.measure_sync(ctx, p)
            for proc in procs:
                proc.stop()
            fig["load"] = os.getloadavg()[0]
            figs[p.key].append(fig)
        scale.log("round %d done" % (r + 1))

    def med(key, what):
        vals = [f[what] for f in figs[key] if f[what] is not None]
        return statistics.median(vals) if vals else None

    print("%d objects in kube-sim (scale %g), %d rounds, Secrets %s; A = %s, B = %s" %
          (objects, a.scale, a.rounds, "metadata-only" if a.metadata else "full", a.a, a.b))
    print()
    print("| round | client | time to synced | peak RSS | CPU | load |")
    print("|---|---|---|---|---|---|")
    for r in range(a.rounds):
        for p in peers:
            f = figs[p.key][r]
            print("| %d | %s | %.2f s | %.0f MB | %.2f s | %.1f |" %
                  (r + 1, p.key, f["sync_seconds"], f["sync_peak_rss_mb"] or -1,
                   f["sync_cpu_seconds"] or -1, f["load"]))
    print()
    print("| client (median) | time | peak RSS | CPU | time ÷ js | RSS ÷ js | CPU ÷ floor |")
    print("|---|---|---|---|---|---|---|")
    for p in peers:
        t, rss, cpu = (med(p.key, "sync_seconds"), med(p.key, "sync_peak_rss_mb"),
                       med(p.key, "sync_cpu_seconds"))
        jt = med("js", "sync_seconds") if "js" in figs else None
        jr = med("js", "sync_peak_rss_mb") if "js" in figs else None
        print("| %s | %.2f s | %.0f MB | %.2f s | %s | %s | %.1f× |" %
              (p.key, t, rss, cpu, "%.2f× faster" % (jt / t) if jt and p.key != "js" else "",
               "%.2f" % (rss / jr) if jr and p.key != "js" else "", cpu / statistics.median(floors)))
    print()
    print("floor: Boost.JSON parses the %d LIST pages (%.0f MB) in %s s CPU (median %.3f s)" %
          (len(pages), page_bytes / 1e6, ", ".join("%.3f" % f for f in floors),
           statistics.median(floors)))


if __name__ == "__main__":
    main()
