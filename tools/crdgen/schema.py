"""Small vocabulary for writing structural OpenAPI v3 schemas (apiextensions.k8s.io/v1).

Every helper returns a fresh dict, so a type can be reused at many places without
YAML anchors appearing in the output. Keep this file free of any API knowledge: the
types themselves live in api.py.
"""

import copy


def _node(type_, doc=None, **extra):
    out = {}
    if type_ is not None:
        out["type"] = type_
    if doc:
        out["description"] = doc
    for key, value in extra.items():
        if value is not None:
            out[key] = value
    return out


def String(doc=None, enum=None, default=None, pattern=None, min_length=None, format=None):
    return _node("string", doc, enum=list(enum) if enum else None, default=default,
                 pattern=pattern, minLength=min_length, format=format)


def Bool(doc=None, default=None):
    return _node("boolean", doc, default=default)


def Int32(doc=None, default=None):
    return _node("integer", doc, format="int32", default=default)


def Int64(doc=None):
    return _node("integer", doc, format="int64")


def Integer(doc=None):
    """An integer without a declared width (upstream declares none for these)."""
    return _node("integer", doc)


def IntOrString(doc=None):
    """Kubernetes int-or-string (ports, quantities)."""
    out = _node(None, doc)
    out["anyOf"] = [{"type": "integer"}, {"type": "string"}]
    out["x-kubernetes-int-or-string"] = True
    return out


def List(items, doc=None, list_type=None, map_keys=None):
    out = _node("array", doc)
    out["items"] = copy.deepcopy(items)
    if list_type:
        out["x-kubernetes-list-type"] = list_type
    if map_keys:
        out["x-kubernetes-list-map-keys"] = list(map_keys)
    return out


def Map(values, doc=None):
    out = _node("object", doc)
    out["additionalProperties"] = copy.deepcopy(values)
    return out


def StringMap(doc=None):
    return Map(String(), doc)


def Object(fields, required=(), doc=None, atomic=False, preserve=False):
    """An object with known fields. preserve=True keeps fields not listed here
    (used for Kubernetes-native types where only a few members are read)."""
    out = _node("object", doc)
    if fields:
        out["properties"] = {name: copy.deepcopy(schema) for name, schema in fields.items()}
    if required:
        out["required"] = sorted(required)
    if atomic:
        out["x-kubernetes-map-type"] = "atomic"
    if preserve:
        out["x-kubernetes-preserve-unknown-fields"] = True
    return out


def Opaque(doc=None, fields=None, required=()):
    """A Kubernetes-native or free-form object stored as given (not pruned)."""
    return Object(fields or {}, required=required, doc=doc, preserve=True)


def Doc(schema, doc):
    """The same schema with its own description at this use site."""
    out = copy.deepcopy(schema)
    out["description"] = doc
    return out

