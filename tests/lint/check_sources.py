#!/usr/bin/env python3
"""Source checks that keep two house rules true (README: House rules).

  * Explicit time: product code reads the time through net/clock.hpp (net::Clock,
    net::WallClock), never straight from std::chrono's clocks, so tests can substitute a
    FakeClock. Files that predate the rule are listed below with how many direct reads
    they may still have: the count may only go down (move a read onto the clock, then
    lower the number here).
  * Errors are values: above the API client (reconcile/, app/), errors are told apart by
    their enum values (runtime::Errc, ApiError's predicates), never by comparing reason
    strings. Only k8s/ turns the API server's reason strings into values.

Usage: check_sources.py <source dir>. Exit status 1 lists every violation.
"""
import re
import subprocess
import sys
from pathlib import Path

# Files that read std::chrono clocks directly, and how often they still may.
CLOCK_READS_ALLOWED = {
    "net/clock.hpp": None,  # the clock abstraction itself: any number
    "net/detail/watchdog.hpp": 2,
    "net/http_client.cpp": 2,
    "net/http_server.cpp": 2,
    "net/log.cpp": 1,
    "k8s/event_recorder.cpp": 4,
    "k8s/http_api_client.cpp": 6,
    "k8s/informer.cpp": 1,
    "k8s/kubeconfig.cpp": 3,
    "k8s/leader_election.cpp": 9,
    "tools/kube-sim/api.hpp": 2,
}
PRODUCT_DIRS = ("net/", "k8s/", "reconcile/", "app/", "tools/kube-sim/")
REASON_DIRS = ("reconcile/", "app/")
SOURCE = re.compile(r"\.(cpp|hpp|h|cc)$")

CLOCK_READ = re.compile(r"\b(?:std::chrono::)?(?:steady|system|high_resolution)_clock::now\s*\(")
# `x.reason == "Conflict"`, `reason() != "..."`, `"Gone" == e.reason`
REASON_COMPARE = re.compile(
    r"""\breason\b(?:\(\))?\s*[!=]=\s*"|"[A-Za-z]+"\s*[!=]=\s*[\w.>()\-]*\breason\b""")


def code_only(line):
    """The line without // comments and string-literal contents (quotes kept)."""
    out = []
    i = 0
    in_str = False
    while i < len(line):
        c = line[i]
        if in_str:
            if c == "\\":
                i += 2
                continue
            if c == '"':
                in_str = False
                out.append(c)
            i += 1
            continue
        if c == '"':
            in_str = True
            out.append(c)
        elif line.startswith("//", i):
            break
        else:
            out.append(c)
        i += 1
    return "".join(out)


def self_test():
    """The patterns still catch what they are for (and not comments or strings)."""
    assert CLOCK_READ.search(code_only("auto t = std::chrono::steady_clock::now();"))
    assert CLOCK_READ.search(code_only("const auto w = system_clock::now ();"))
    assert not CLOCK_READ.search(code_only("x = 1;  // std::chrono::steady_clock::now()"))
    assert not CLOCK_READ.search(code_only('log("steady_clock::now() is not used");'))
    assert not CLOCK_READ.search(code_only("net::steady_clock().now();"))
    assert REASON_COMPARE.search('if (r.error().reason == "WritesDisabled") {')
    assert REASON_COMPARE.search('if ("Gone" != e.reason) return;')
    assert REASON_COMPARE.search('if (p.reason() == "Conflict")')
    assert not REASON_COMPARE.search("if (failure->code == runtime::Errc::apply_failed)")
    assert not REASON_COMPARE.search('std::string reason = "Paused";')


def main():
    self_test()
    root = Path(sys.argv[1] if len(sys.argv) > 1 else ".").resolve()
    listed = subprocess.run(["git", "-C", str(root), "ls-files"], capture_output=True, text=True)
    if listed.returncode == 0:
        files = listed.stdout.split()
    else:  # not a git checkout (a source tarball): every file under the product directories
        files = [str(p.relative_to(root)) for d in PRODUCT_DIRS for p in (root / d).rglob("*")
                 if p.is_file()]
    problems = []
    counts = {}
    for f in files:
        if not SOURCE.search(f) or not f.startswith(PRODUCT_DIRS):
            continue
        try:
            text = (root / f).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            continue
        for n, raw in enumerate(text.split("\n"), 1):
            line = code_only(raw)
            if CLOCK_READ.search(line):
                counts.setdefault(f, []).append(n)
            if f.startswith(REASON_DIRS) and REASON_COMPARE.search(raw.split("//")[0]):
                problems.append(f"{f}:{n}: an error told apart by comparing its reason string; "
                                f"compare an error enum (runtime::Errc) or use ApiError's "
                                f"predicates instead: {raw.strip()}")
    for f, lines in sorted(counts.items()):
        allowed = CLOCK_READS_ALLOWED.get(f, 0)
        if allowed is None or len(lines) <= allowed:
            continue
        where = ", ".join(str(n) for n in lines)
        problems.append(f"{f}: {len(lines)} direct read(s) of a std::chrono clock (lines {where}); "
                        f"{allowed} allowed. Take a const net::Clock& (net/clock.hpp) so tests "
                        f"can fake the time.")
    for p in problems:
        print(p)
    if problems:
        print(f"{len(problems)} violation(s) of the house rules (tests/lint/check_sources.py)")
        return 1
    print("house rules hold: no new direct clock reads, no reason-string comparisons")
    return 0


if __name__ == "__main__":
    sys.exit(main())
