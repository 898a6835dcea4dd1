"""The configuration schema Prometheus applies to the sections of a Grafana Agent static
configuration that the operator generates (metrics.global, metrics.configs[]: the
instances' scrape_configs and remote_write), as a test utility.

Prometheus and the agent read their YAML strictly: an unknown key fails the whole file
(`promtool check config`, `agent -config.file`). The schema here lists, per section, the
keys Prometheus v2.42 accepts (the version the compatibility tests ran against; Grafana
Agent v0.44 embeds a later 2.x, which accepts all of these) and each key's type, so a test
fails on a key the agent would refuse, a list where a map is expected, or a duration in a
syntax the consumer does not read.

Only keys matter here: values are checked for type and duration syntax, not for meaning
(the operator's validation and the golden outputs cover that).
"""

import re

# Prometheus' model.Duration: units y w d h m s ms in this order, each at most once,
# integers only; "0" is the zero duration.
_PROM_DURATION = re.compile(r"^((\d+)y)?((\d+)w)?((\d+)d)?((\d+)h)?((\d+)m)?((\d+)s)?((\d+)ms)?$")
# Go's time.Duration (the agent's own settings: WAL times, flush deadline).
_GO_DURATION = re.compile(r"^[-+]?(((\d+(\.\d*)?|\.\d+)(ns|us|\u00b5s|ms|s|m|h))+|0)$")


class Type:
    """A leaf type: a name and a predicate over the YAML value."""

    def __init__(self, name, accepts):
        self.name = name
        self.accepts = accepts


# Types follow how Prometheus reads its file (gopkg.in/yaml.v2, strict): any scalar
# decodes into a string field (a number in `params` is its text), and a float with an
# integral value decodes into an integer field (the upstream operator writes 1000000 as
# `1e+06`). PyYAML reads `1e+06` as a string (YAML 1.1 floats need a dot), hence the
# parse below.
def _is_scalar(v):
    return v is not None and not isinstance(v, (dict, list))


def _is_integral(v):
    if isinstance(v, bool):
        return False
    if isinstance(v, int):
        return True
    if isinstance(v, str):
        try:
            v = float(v)
        except ValueError:
            return False
    return isinstance(v, float) and v.is_integer()


STR = Type("a string", _is_scalar)
# Secret-valued strings (inline credentials): only the type is checked.
SECRET = STR
BOOL = Type("a boolean", lambda v: isinstance(v, bool))
INT = Type("an integer", _is_integral)
DURATION = Type(
    "a Prometheus duration",
    lambda v: isinstance(v, str) and v != "" and _PROM_DURATION.match(v) is not None,
)
GO_DURATION = Type(
    "Go duration", lambda v: isinstance(v, str) and _GO_DURATION.match(v) is not None
)
# Prometheus' units.Base2Bytes ("10MB", "1KiB"...) and 0.
SIZE = Type("a size", lambda v: (isinstance(v, str) and re.match(r"^\d+(B|KB|MB|GB|TB|KiB|MiB|GiB|TiB)?$", v) is not None)
            or (isinstance(v, int) and not isinstance(v, bool)))


class ListOf:
    def __init__(self, item):
        self.item = item


class MapOf:
    """A map with free keys (labels, headers, params) whose values share one type."""

    def __init__(self, value):
        self.value = value


def section(*parts, **keys):
    """A section: a closed set of keys. Positional arguments merge shared key sets."""
    out = {}
    for p in parts:
        out.update(p)
    out.update(keys)
    return out


TLS_CONFIG = section(
    ca=SECRET, ca_file=STR, cert=SECRET, cert_file=STR, key=SECRET, key_file=STR,
    server_name=STR, insecure_skip_verify=BOOL, min_version=STR,
)
BASIC_AUTH = section(username=STR, password=SECRET, password_file=STR)
AUTHORIZATION = section(type=STR, credentials=SECRET, credentials_file=STR)
OAUTH2 = section(
    client_id=STR, client_secret=SECRET, client_secret_file=STR, scopes=ListOf(STR),
    token_url=STR, endpoint_params=MapOf(STR), tls_config=TLS_CONFIG, proxy_url=STR,
)
# Prometheus' HTTPClientConfig, shared by scrape configs, remote write and the
# Kubernetes service discovery.
HTTP_CLIENT = section(
    basic_auth=BASIC_AUTH, authorization=AUTHORIZATION, oauth2=OAUTH2,
    bearer_token=SECRET, bearer_token_file=STR, tls_config=TLS_CONFIG, proxy_url=STR,
    follow_redirects=BOOL, enable_http2=BOOL,
)
RELABEL_CONFIG = section(
    source_labels=ListOf(STR), separator=STR, regex=STR, modulus=INT,
    target_label=STR, replacement=STR, action=STR,
)
KUBERNETES_SD = section(
    HTTP_CLIENT,
    api_server=STR, role=STR, kubeconfig_file=STR,
    namespaces=section(own_namespace=BOOL, names=ListOf(STR)),
    selectors=ListOf(section(role=STR, label=STR, field=STR)),
    attach_metadata=section(node=BOOL),
)
STATIC_CONFIG = section(targets=ListOf(STR), labels=MapOf(STR))
SCRAPE_CONFIG = section(
    HTTP_CLIENT,
    job_name=STR, honor_labels=BOOL, honor_timestamps=BOOL, params=MapOf(ListOf(STR)),
    scrape_interval=DURATION, scrape_timeout=DURATION, metrics_path=STR, scheme=STR,
    body_size_limit=SIZE, sample_limit=INT, target_limit=INT, label_limit=INT,
    label_name_length_limit=INT, label_value_length_limit=INT,
    kubernetes_sd_configs=ListOf(KUBERNETES_SD), static_configs=ListOf(STATIC_CONFIG),
    relabel_configs=ListOf(RELABEL_CONFIG), metric_relabel_configs=ListOf(RELABEL_CONFIG),
)
QUEUE_CONFIG = section(
    capacity=INT, max_shards=INT, min_shards=INT, max_samples_per_send=INT,
    batch_send_deadline=DURATION, min_backoff=DURATION, max_backoff=DURATION,
    retry_on_http_429=BOOL,
)
METADATA_CONFIG = section(send=BOOL, send_interval=DURATION, max_samples_per_send=INT)
SIGV4 = section(region=STR, access_key=STR, secret_key=SECRET, profile=STR, role_arn=STR)
REMOTE_WRITE = section(
    HTTP_CLIENT,
    url=STR, remote_timeout=DURATION, headers=MapOf(STR), write_relabel_configs=ListOf(RELABEL_CONFIG),
    name=STR, send_exemplars=BOOL, send_native_histograms=BOOL, sigv4=SIGV4,
    queue_config=QUEUE_CONFIG, metadata_config=METADATA_CONFIG,
)
# The agent's global block: Prometheus' global config plus the instances' shared remote
# write.
GLOBAL = section(
    scrape_interval=DURATION, scrape_timeout=DURATION, evaluation_interval=DURATION,
    external_labels=MapOf(STR), remote_write=ListOf(REMOTE_WRITE),
)
INSTANCE = section(
    name=STR, host_filter=BOOL, host_filter_relabel_configs=ListOf(RELABEL_CONFIG),
    scrape_configs=ListOf(SCRAPE_CONFIG), remote_write=ListOf(REMOTE_WRITE),
    wal_truncate_frequency=GO_DURATION, min_wal_time=GO_DURATION, max_wal_time=GO_DURATION,
    remote_flush_deadline=GO_DURATION, write_stale_on_shutdown=BOOL,
)
METRICS = section(
    wal_directory=STR, wal_cleanup_age=GO_DURATION, wal_cleanup_period=GO_DURATION,
    global_=GLOBAL, configs=ListOf(INSTANCE),
)
METRICS["global"] = METRICS.pop("global_")


def check(value, schema, path="metrics"):
    """The schema violations of value, as 'path: what' strings (empty when it conforms)."""
    errors = []
    if isinstance(schema, dict):
        if not isinstance(value, dict):
            return [f"{path}: expected a map, got {type(value).__name__}"]
        for key, v in value.items():
            if key not in schema:
                errors.append(f"{path}.{key}: unknown key (Prometheus refuses the file)")
                continue
            errors += check(v, schema[key], f"{path}.{key}")
    elif isinstance(schema, ListOf):
        if not isinstance(value, list):
            return [f"{path}: expected a list, got {type(value).__name__}"]
        for i, v in enumerate(value):
            errors += check(v, schema.item, f"{path}[{i}]")
    elif isinstance(schema, MapOf):
        if not isinstance(value, dict):
            return [f"{path}: expected a map, got {type(value).__name__}"]
        for key, v in value.items():
            if not isinstance(key, str):
                errors.append(f"{path}: key {key!r} is not a string")
            errors += check(v, schema.value, f"{path}.{key}")
    elif isinstance(schema, Type):
        if not schema.accepts(value):
            errors.append(f"{path}: {value!r} is not {schema.name}")
    else:
        raise TypeError(f"bad schema at {path}")
    return errors


def check_agent_config(doc):
    """Violations in the metrics section of a parsed agent.yml (none when it has none)."""
    if not isinstance(doc, dict):
        return ["agent.yml: not a map"]
    if "metrics" not in doc:
        return []
    return check(doc["metrics"], METRICS)
