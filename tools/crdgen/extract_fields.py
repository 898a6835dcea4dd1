#!/usr/bin/python3
"""Lists every field path an upstream CRD accepts, with its type and validation.

    /usr/bin/python3 tools/crdgen/extract_fields.py UPSTREAM_CRD.yaml... > FIXTURE.tsv

Used once to produce tests/deploy/fixtures/upstream-crd-fields.tsv from the Grafana
Agent Operator and Prometheus Operator v0.66 CRDs; tests/deploy/check_crds.py checks
that deploy/crds accepts every listed path with a compatible type and no stricter
validation. Re-run it only when moving to newer upstream CRDs.

Output: one line per schema node, tab-separated:
    <Kind>  <path>  <type>  <validation as compact JSON, or {}>
Path syntax: `.field`, `[]` for list items, `{}` for map values; the root is `.`.
Type is string, integer, number, boolean, object, array, int-or-string, or any.
"""

import json
import sys

import yaml

# Members that restrict what an object may contain (descriptions etc. are left out).
VALIDATION_KEYS = (
    "enum", "default", "pattern", "format", "minLength", "maxLength", "minimum", "maximum",
    "exclusiveMinimum", "exclusiveMaximum", "minItems", "maxItems", "minProperties",
    "maxProperties", "required", "x-kubernetes-list-type", "x-kubernetes-list-map-keys",
)


def node_type(schema):
    if schema.get("x-kubernetes-int-or-string"):
        return "int-or-string"
    if "type" in schema:
        return schema["type"]
    return "any"


def walk(schema, path, out):
    validation = {k: schema[k] for k in VALIDATION_KEYS if k in schema}
    if schema.get("x-kubernetes-preserve-unknown-fields"):
        validation["x-kubernetes-preserve-unknown-fields"] = True
    out.append((path or ".", node_type(schema), validation))
    for name, child in sorted(schema.get("properties", {}).items()):
        walk(child, path + "." + name, out)
    if isinstance(schema.get("items"), dict):
        walk(schema["items"], path + "[]", out)
    if isinstance(schema.get("additionalProperties"), dict):
        walk(schema["additionalProperties"], path + "{}", out)


def main(paths):
    lines = []
    for path in paths:
        with open(path, encoding="utf-8") as f:
            for doc in yaml.safe_load_all(f):
                if not doc or doc.get("kind") != "CustomResourceDefinition":
                    continue
                kind = doc["spec"]["names"]["kind"]
                for version in doc["spec"]["versions"]:
                    out = []
                    walk(version["schema"]["openAPIV3Schema"], "", out)
                    for p, t, v in out:
                        lines.append("%s\t%s\t%s\t%s" % (
                            kind, p, t, json.dumps(v, sort_keys=True, separators=(",", ":"))))
    sys.stdout.write("\n".join(sorted(lines)) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
