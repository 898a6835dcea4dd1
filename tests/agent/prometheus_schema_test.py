#!/usr/bin/python3
"""Every generated agent configuration loads in Prometheus, key by key.

Checks the metrics section of:
  * every golden agent.yml under tests/agent/golden (the reviewed expected outputs);
  * what `agent-operator render` prints for every golden input and for deploy/examples,
    in both compat modes (--agent-compat=upstream and fixed), so fixed mode is checked
    over every feature the goldens cover, not only the compat-fixed case.

Usage: prometheus_schema_test.py BIN_DIR SOURCE_DIR
"""

import base64
import pathlib
import subprocess
import sys

import yaml

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import prometheus_schema as schema  # noqa: E402


def self_test():
    """The checker can fail: each kind of violation is reported."""
    good = {
        "configs": [{
            "name": "ns/m",
            "scrape_configs": [{"job_name": "j", "scrape_interval": "30s",
                                "relabel_configs": [{"action": "keep", "regex": "x"}]}],
        }],
        "global": {"remote_write": [{"url": "http://rw",
                                     "queue_config": {"retry_on_http_429": True}}]},
    }
    assert schema.check(good, schema.METRICS) == [], schema.check(good, schema.METRICS)
    cases = {
        "unknown key": ({"global": {"remote_write": [{"url": "u", "queue_config": {"max_retries": 5}}]}},
                        "metrics.global.remote_write[0].queue_config.max_retries: unknown key"),
        "renamed key": ({"global": {"remote_write": [{"url": "u", "queue_config": {"retry_on_rate_limit": True}}]}},
                        "queue_config.retry_on_rate_limit: unknown key"),
        "bad duration": ({"configs": [{"scrape_configs": [{"scrape_interval": "1m30"}]}]},
                         "scrape_interval: '1m30' is not a Prometheus duration"),
        "go duration in a Prometheus field": ({"global": {"scrape_interval": "1.5m"}},
                                              "'1.5m' is not a Prometheus duration"),
        "string for a boolean": ({"configs": [{"scrape_configs": [{"honor_labels": "true"}]}]},
                                 "honor_labels: 'true' is not a boolean"),
        "map for a list": ({"configs": [{"scrape_configs": [{"static_configs": {"targets": []}}]}]},
                           "static_configs: expected a list"),
        "list for a string": ({"configs": [{"scrape_configs": [{"job_name": ["a"]}]}]},
                              "job_name: ['a'] is not a string"),
        "fraction for an integer": ({"configs": [{"scrape_configs": [{"sample_limit": 1.5}]}]},
                                    "sample_limit: 1.5 is not an integer"),
        "list for a map": ({"global": {"external_labels": ["a"]}}, "external_labels: expected a map"),
        "unknown oauth2 key": ({"global": {"remote_write": [{"oauth2": {"clientId": "x"}}]}},
                               "oauth2.clientId: unknown key"),
    }
    for name, (value, expected) in cases.items():
        errors = schema.check(value, schema.METRICS)
        assert any(expected in e for e in errors), f"self-test '{name}': {errors}"


def agent_ymls_of_render(binary, paths, compat):
    """(secret name, parsed agent.yml) for every config Secret render prints."""
    args = [str(binary), "render", f"--agent-compat={compat}"]
    for p in paths:
        args += ["-f", str(p)]
    run = subprocess.run(args, capture_output=True, text=True, check=False)
    # Exit 1: some input was refused (a few golden inputs are invalid on purpose); what
    # was rendered is still checked. The count check in main() catches a render that
    # printed nothing at all.
    if run.returncode not in (0, 1):
        raise AssertionError(f"{' '.join(args)} exited {run.returncode}: {run.stderr}")
    out = []
    for doc in yaml.safe_load_all(run.stdout):
        if not doc or doc.get("kind") != "Secret":
            continue
        data = doc.get("data") or {}
        if "agent.yml" in data:
            text = base64.b64decode(data["agent.yml"]).decode()
            out.append((doc["metadata"]["name"], yaml.safe_load(text)))
    return out


def main():
    bin_dir, src = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2])
    binary = bin_dir / "agent-operator"
    self_test()
    failures = []
    checked = 0

    golden = src / "tests" / "agent" / "golden"
    for f in sorted(golden.glob("*/*.agent.yml")):
        errors = schema.check_agent_config(yaml.safe_load(f.read_text()))
        checked += 1
        failures += [f"{f.relative_to(src)}: {e}" for e in errors]

    inputs = [(d.name, [d / "input.yaml"]) for d in sorted(golden.iterdir())
              if (d / "input.yaml").exists()]
    inputs.append(("deploy/examples", [src / "deploy" / "examples"]))
    for compat in ("upstream", "fixed"):
        rendered = 0
        for name, paths in inputs:
            for secret, doc in agent_ymls_of_render(binary, paths, compat):
                errors = schema.check_agent_config(doc)
                checked += 1
                rendered += 1 if "metrics" in doc else 0
                failures += [f"render --agent-compat={compat} {name} ({secret}): {e}" for e in errors]
        # The inputs hold metrics instances: a render that printed none checked nothing.
        if rendered < 10:
            failures.append(f"render --agent-compat={compat}: only {rendered} configs with a metrics section")

    if failures:
        print("\n".join(failures))
        print(f"FAIL: {len(failures)} schema violation(s) in {checked} agent configurations")
        return 1
    print(f"ok: {checked} agent configurations conform to Prometheus' configuration schema")
    return 0


if __name__ == "__main__":
    sys.exit(main())
