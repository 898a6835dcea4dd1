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


def String(doc=None, enum=None, default=None, pattern=None, min_length=None, format=None,
           max_length=None):
    return _node("string", doc, enum=list(enum) if enum else None, default=default,
                 pattern=pattern, minLength=min_length, maxLength=max_length, format=format)


def Bool(doc=None, default=None):
    return _node("boolean", doc, default=default)


def Int32(doc=None, default=None, minimum=None, maximum=None):
    return _node("integer", doc, format="int32", default=default, minimum=minimum,
                 maximum=maximum)


def Int64(doc=None, minimum=None, maximum=None):
    return _node("integer", doc, format="int64", minimum=minimum, maximum=maximum)


def Integer(doc=None, minimum=None, maximum=None):
    """An integer without a declared width (upstream declares none for these)."""
    return _node("integer", doc, minimum=minimum, maximum=maximum)


def IntOrString(doc=None):
    """Kubernetes int-or-string (ports, quantities)."""
    out = _node(None, doc)
    out["anyOf"] = [{"type": "integer"}, {"type": "string"}]
    out["x-kubernetes-int-or-string"] = True
    return out


def List(items, doc=None, list_type=None, map_keys=None, max_items=None):
    out = _node("array", doc, maxItems=max_items)
    out["items"] = copy.deepcopy(items)
    if list_type:
        out["x-kubernetes-list-type"] = list_type
    if map_keys:
        out["x-kubernetes-list-map-keys"] = list(map_keys)
    return out


def Map(values, doc=None, max_properties=None):
    out = _node("object", doc, maxProperties=max_properties)
    out["additionalProperties"] = copy.deepcopy(values)
    return out


def StringMap(doc=None, max_properties=None):
    return Map(String(), doc, max_properties=max_properties)


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



def Rules(schema, *rules):
    """The same schema with CEL validation rules (x-kubernetes-validations), each a
    (rule, message) pair, evaluated by the API server against the object at this node."""
    out = copy.deepcopy(schema)
    out.setdefault("x-kubernetes-validations", [])
    for rule, message in rules:
        out["x-kubernetes-validations"].append({"rule": rule, "message": message})
    return out
