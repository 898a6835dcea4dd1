"""The custom resources agent-operator serves and consumes, described compactly.

Fields the operator reads are typed; Kubernetes-native
embedded types (containers, volumes, affinity, ...) are stored as given, typed only in
the members the operator itself looks at (names, merge keys, Secret references).

Validation starts from what the upstream Grafana Agent Operator and Prometheus Operator
v0.66 CRDs enforce and goes further only where the agent (Prometheus, Loki) or the API
server would refuse the value anyway: duration syntaxes, label names, relabel rule
consistency, URL schemes, enums of the consumers, bounds, and cross-field rules as CEL
(x-kubernetes-validations). Each such tightening is listed with its reason in
tests/deploy/check_crds.py (TIGHTENED); everything else accepts whatever upstream
accepts. The operator checks all of it again itself (old CRDs, `render`).
"""

from schema import (Bool, Doc, Int32, Int64, Integer, IntOrString, List, Map, Object,
                    Opaque, Rules, String, StringMap)

# --- shared value types -------------------------------------------------------------

# Prometheus duration syntax, e.g. 30s, 1m30s, 1h (what Prometheus itself parses).
DURATION_PATTERN = r"^(0|(([0-9]+)y)?(([0-9]+)w)?(([0-9]+)d)?(([0-9]+)h)?(([0-9]+)m)?(([0-9]+)s)?(([0-9]+)ms)?)$"
Duration = String(pattern=DURATION_PATTERN)

# Go durations (time.ParseDuration), read by the agent's instance settings and by Loki:
# 1.5h, 300ms, 1h30m; no d, w or y.
GO_DURATION_PATTERN = r"^([-+]?(([0-9]+(\.[0-9]*)?|\.[0-9]+)(ns|us|µs|μs|ms|s|m|h))+|0)?$"
GoDuration = String(pattern=GO_DURATION_PATTERN)

# A label name, or empty where empty disables the label.
LABEL_NAME_OR_EMPTY_PATTERN = r"^([a-zA-Z_][a-zA-Z0-9_]*)?$"

# A replace target: a label name with $1 / ${1} references (Prometheus' relabelTarget).
RELABEL_TARGET_PATTERN = r"^((([a-zA-Z_]|\$(\{\w+\}|\w+))+\w*)+)?$"

# Absolute http(s) URLs with a host; proxies may also be socks5. Empty is unset.
HTTP_URL_PATTERN = r"^[hH][tT][tT][pP][sS]?://[^\s/?#]+([/?#]\S*)?$"
PROXY_URL_PATTERN = r"^(([hH][tT][tT][pP][sS]?|[sS][oO][cC][kK][sS]5)://[^\s/?#]+([/?#]\S*)?)?$"

# host or host:port (a scrape target address).
HOST_PORT_PATTERN = r"^([^\s/:@?#\[\]]+|\[[0-9a-fA-F:.]+\])(:[0-9]{1,5})?$"

# Lower-case RFC 1123 subdomains (names of Kubernetes objects), or empty.
SUBDOMAIN_OR_EMPTY_PATTERN = r"^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*)?$"

# Numbers the configuration holds as float64 are exact up to 2^53.
FLOAT64_EXACT = 9007199254740992

# Upper bounds on list lengths (they also bound the cost of the CEL rules below them).
MAX_RULES = 1000
MAX_ENDPOINTS = 100
MAX_CLIENTS = 100

# Label names Prometheus accepts as relabel sources.
LABEL_NAME_PATTERN = r"^[a-zA-Z_][a-zA-Z0-9_]*$"

# Relabel actions as the Prometheus Operator lists them: each action in Prometheus'
# lower-case spelling and in CamelCase. The operator copies the value verbatim.
RELABEL_ACTIONS = [
    "replace", "Replace", "keep", "Keep", "drop", "Drop", "hashmod", "HashMod",
    "labelmap", "LabelMap", "labeldrop", "LabelDrop", "labelkeep", "LabelKeep",
    "lowercase", "Lowercase", "uppercase", "Uppercase", "keepequal", "KeepEqual",
    "dropequal", "DropEqual",
]

SecretKeySelector = Object({
    "name": String("Name of the Secret, in the namespace of the object holding this reference."),
    "key": String("Key in the Secret's data."),
    "optional": Bool("Accepted for compatibility; the operator treats every reference as required."),
}, required=["key"], atomic=True)

ConfigMapKeySelector = Object({
    "name": String("Name of the ConfigMap, in the namespace of the object holding this reference."),
    "key": String("Key in the ConfigMap's data or binaryData."),
    "optional": Bool("Accepted for compatibility; the operator treats every reference as required."),
}, required=["key"], atomic=True)

SecretOrConfigMap = Rules(Object({
    "secret": Doc(SecretKeySelector, "Secret holding the value."),
    "configMap": Doc(ConfigMapKeySelector, "ConfigMap holding the value."),
}), ("!(has(self.secret) && has(self.configMap))", "set either secret or configMap, not both"))

_safe_tls_fields = {
    "ca": Doc(SecretOrConfigMap, "CA certificate used to verify the server."),
    "cert": Doc(SecretOrConfigMap, "Client certificate."),
    "keySecret": Doc(SecretKeySelector, "Secret holding the client key."),
    "serverName": String("Server name used to verify the certificate (SNI)."),
    "insecureSkipVerify": Bool("Do not verify the server certificate."),
}
SafeTLSConfig = Object(_safe_tls_fields)
TLSConfig = Object(dict(_safe_tls_fields, **{
    "caFile": String("Path of the CA file inside the agent container (wins over ca)."),
    "certFile": String("Path of the client certificate inside the agent container (wins over cert)."),
    "keyFile": String("Path of the client key inside the agent container (wins over keySecret)."),
}))

BasicAuth = Object({
    "username": Doc(SecretKeySelector, "Secret key holding the user name."),
    "password": Doc(SecretKeySelector, "Secret key holding the password."),
})

OAuth2 = Object({
    "clientId": Doc(SecretOrConfigMap, "Client ID (only a Secret source is rendered)."),
    "clientSecret": Doc(SecretKeySelector, "Secret key holding the client secret."),
    "tokenUrl": String("URL to fetch the token from.", min_length=1, pattern=HTTP_URL_PATTERN),
    "scopes": List(String(), "OAuth2 scopes."),
    "endpointParams": StringMap("Extra parameters appended to the token URL."),
}, required=["clientId", "clientSecret", "tokenUrl"])

_safe_authorization_fields = {
    "type": String("Authentication type (default Bearer)."),
    "credentials": Doc(SecretKeySelector, "Secret key holding the credentials."),
}
SafeAuthorization = Object(_safe_authorization_fields)
Authorization = Object(dict(_safe_authorization_fields, **{
    "credentialsFile": String("File holding the credentials."),
}))

RelabelConfig = Rules(Object({
    "sourceLabels": List(String(pattern=LABEL_NAME_PATTERN), "Labels whose values are joined and matched.",
                         max_items=MAX_RULES),
    "separator": String("Separator placed between concatenated source label values."),
    "targetLabel": String("Label the result is written to.", pattern=RELABEL_TARGET_PATTERN),
    "regex": String("Regular expression matched against the joined source values."),
    "modulus": Int64("Modulus for the hashmod action.", minimum=0, maximum=FLOAT64_EXACT),
    "replacement": String("Replacement value; regex capture groups are available."),
    "action": String("Relabel action, in lower-case or CamelCase; copied verbatim.",
                     enum=RELABEL_ACTIONS, default="replace"),
}), ("!has(self.action) || !(self.action in ['replace', 'Replace', 'hashmod', 'HashMod', "
     "'lowercase', 'Lowercase', 'uppercase', 'Uppercase', 'keepequal', 'KeepEqual', "
     "'dropequal', 'DropEqual']) || (has(self.targetLabel) && self.targetLabel != '')",
     "this relabel action needs a targetLabel"),
    ("!has(self.action) || !(self.action in ['hashmod', 'HashMod']) || "
     "(has(self.modulus) && self.modulus > 0)",
     "the hashmod action needs a modulus greater than 0"))

RelabelList = lambda doc: List(RelabelConfig, doc, max_items=MAX_RULES)  # noqa: E731

LabelSelector = Object({
    "matchLabels": StringMap("Labels that must all be present with these values."),
    "matchExpressions": List(Object({
        "key": String("Label key."),
        "operator": String("In, NotIn, Exists or DoesNotExist.",
                           enum=["In", "NotIn", "Exists", "DoesNotExist"]),
        "values": List(String(), "Values for In and NotIn; empty for Exists and DoesNotExist."),
    }, required=["key", "operator"]), "Requirements that must all hold."),
}, atomic=True)

NamespaceSelector = Object({
    "any": Bool("Select every namespace."),
    "matchNames": List(String(), "Namespaces to select."),
})

EmbeddedObjectMetadata = Object({
    "name": String("Name (ignored where the operator names the object)."),
    "labels": StringMap("Labels added to the object."),
    "annotations": StringMap("Annotations added to the object."),
})

# --- Kubernetes-native types, preserved except for the members the operator reads ---

LocalObjectReference = Object({"name": String("Name of the referenced object.")}, atomic=True)

EnvVar = Opaque(fields={
    "name": String(),
    "valueFrom": Opaque(fields={
        "secretKeyRef": SecretKeySelector,
        "configMapKeyRef": ConfigMapKeySelector,
    }),
}, required=["name"])

ContainerPort = Opaque(fields={
    "containerPort": Int32(),
    "name": String(),
    "protocol": String(default="TCP"),
}, required=["containerPort"])

VolumeMount = Opaque("A Kubernetes VolumeMount.", fields={
    "name": String(),
    "mountPath": String(),
}, required=["mountPath", "name"])

Volume = Opaque("A Kubernetes Volume.", fields={"name": String()}, required=["name"])

# Strategic-merge keys (name, env name, ports, mountPath) and Secret references are typed.
Container = Opaque("A Kubernetes Container.", fields={
    "name": String(),
    "env": List(EnvVar),
    "ports": List(ContainerPort),
    "volumeMounts": List(VolumeMount),
}, required=["name"])

StorageSpec = Object({
    "emptyDir": Opaque("emptyDir volume used for the WAL instead of a claim."),
    "ephemeral": Opaque("Accepted for compatibility; not used."),
    "volumeClaimTemplate": Object({
        "apiVersion": String(),
        "kind": String(),
        "metadata": Doc(EmbeddedObjectMetadata, "name, labels and annotations of the claim."),
        "spec": Opaque("A Kubernetes PersistentVolumeClaimSpec."),
        "status": Opaque("A Kubernetes PersistentVolumeClaimStatus."),
    }, doc="PersistentVolumeClaim template for the WAL of every metrics pod."),
    "disableMountSubPath": Bool("Accepted for compatibility; not used."),
})

# --- Grafana Agent Operator types ---------------------------------------------------

APIServerConfig = Object({
    "host": String("Kubernetes API address (host, host:port or URL)."),
    "basicAuth": Doc(BasicAuth, "Basic authentication against the API server."),
    "bearerToken": String("Bearer token (inline)."),
    "bearerTokenFile": String("File holding the bearer token."),
    "tlsConfig": Doc(TLSConfig, "TLS settings for the API server."),
    "authorization": Doc(Authorization, "Accepted for compatibility; not rendered."),
}, required=["host"])

RemoteWriteSpec = Rules(Object({
    "name": String("Name of the remote write queue (unique)."),
    "url": String("URL of the remote write endpoint (http or https).", pattern=HTTP_URL_PATTERN),
    "remoteTimeout": Doc(Duration, "Timeout of requests to the endpoint."),
    "headers": StringMap("Custom HTTP headers."),
    "writeRelabelConfigs": RelabelList("Relabelings applied before sending."),
    "basicAuth": Doc(BasicAuth, "Basic authentication."),
    "oauth2": Doc(OAuth2, "OAuth2 authentication."),
    "bearerToken": String("Bearer token (inline)."),
    "bearerTokenFile": String("File holding the bearer token."),
    "sigv4": Rules(Object({
        "region": String(),
        "accessKey": SecretKeySelector,
        "secretKey": SecretKeySelector,
        "profile": String(),
        "roleARN": String(),
    }, doc="AWS Signature Version 4 signing."),
        ("has(self.accessKey) == has(self.secretKey)", "set both accessKey and secretKey, or neither")),
    "tlsConfig": Doc(TLSConfig, "TLS settings."),
    "proxyUrl": String("Proxy URL (http, https or socks5).", pattern=PROXY_URL_PATTERN),
    "queueConfig": Rules(Object({
        "capacity": Integer(minimum=0, maximum=10000000),
        "minShards": Integer(minimum=0, maximum=10000),
        "maxShards": Integer(minimum=0, maximum=10000),
        "maxSamplesPerSend": Integer(minimum=0, maximum=10000000),
        "batchSendDeadline": Duration,
        "maxRetries": Integer("Accepted for compatibility; not rendered.", minimum=0),
        "minBackoff": Duration,
        "maxBackoff": Duration,
        "retryOnRateLimit": Bool("Accepted for compatibility; not rendered."),
    }, doc="Remote write queue tuning."),
        ("!has(self.minShards) || !has(self.maxShards) || self.minShards == 0 || "
         "self.maxShards == 0 || self.minShards <= self.maxShards",
         "minShards must not be above maxShards")),
    "metadataConfig": Object({
        "send": Bool(),
        "sendInterval": Duration,
    }, doc="Metric metadata sending."),
}, required=["url"]), ("!(has(self.bearerToken) && has(self.bearerTokenFile))",
                       "set bearerToken or bearerTokenFile, not both"),
    ("(has(self.basicAuth) ? 1 : 0) + (has(self.oauth2) ? 1 : 0) + "
     "(has(self.bearerToken) || has(self.bearerTokenFile) ? 1 : 0) + (has(self.sigv4) ? 1 : 0) <= 1",
     "set at most one of basicAuth, oauth2, bearerToken/bearerTokenFile and sigv4"))

LogsClientSpec = Rules(Object({
    "url": String("Loki push URL (http or https).", pattern=HTTP_URL_PATTERN),
    "tenantId": String("Tenant ID sent with every push."),
    "batchWait": Doc(GoDuration, "Maximum time to wait before sending a batch."),
    "batchSize": Integer("Maximum batch size in bytes.", minimum=0, maximum=64 << 20),
    "basicAuth": Doc(BasicAuth, "Basic authentication."),
    "oauth2": Doc(OAuth2, "OAuth2 authentication."),
    "bearerToken": String("Bearer token (inline)."),
    "bearerTokenFile": String("File holding the bearer token."),
    "proxyUrl": String("Proxy URL (http, https or socks5).", pattern=PROXY_URL_PATTERN),
    "tlsConfig": Doc(TLSConfig, "TLS settings."),
    "backoffConfig": Object({
        "minPeriod": GoDuration,
        "maxPeriod": GoDuration,
        "maxRetries": Integer(minimum=0),
    }, doc="Retry backoff."),
    "externalLabels": StringMap("Labels added to every log line sent by this client."),
    "timeout": Doc(GoDuration, "Request timeout."),
}, required=["url"]), ("!(has(self.bearerToken) && has(self.bearerTokenFile))",
                       "set bearerToken or bearerTokenFile, not both"),
    ("(has(self.basicAuth) ? 1 : 0) + (has(self.oauth2) ? 1 : 0) + "
     "(has(self.bearerToken) || has(self.bearerTokenFile) ? 1 : 0) <= 1",
     "set at most one of basicAuth, oauth2 and bearerToken/bearerTokenFile"))

MetricsSubsystemSpec = Rules(Object({
    "remoteWrite": List(RemoteWriteSpec, "Remote write targets for every MetricsInstance (Secrets in the agent's namespace).",
                        max_items=MAX_CLIENTS),
    "replicas": Int32("Replicas of every metrics shard (default 1; at most 1000).", maximum=1000),
    "shards": Int32("Number of metrics StatefulSets; targets are split by hashmod (default 1; at most 1000).",
                    maximum=1000),
    "replicaExternalLabelName": String("External label naming the replica (default __replica__; empty disables).",
                                       pattern=LABEL_NAME_OR_EMPTY_PATTERN),
    "metricsExternalLabelName": String("External label naming the cluster (default cluster; empty disables).",
                                       pattern=LABEL_NAME_OR_EMPTY_PATTERN),
    "scrapeInterval": Doc(Duration, "Default scrape interval."),
    "scrapeTimeout": Doc(Duration, "Default scrape timeout."),
    "externalLabels": StringMap("Extra external labels."),
    "arbitraryFSAccessThroughSMs": Object({
        "deny": Bool("Drop ServiceMonitors that reference files in the agent container."),
    }),
    "overrideHonorLabels": Bool("Force honor_labels to false."),
    "overrideHonorTimestamps": Bool("Force honor_timestamps to false."),
    "ignoreNamespaceSelectors": Bool("Scrape only each monitor's own namespace."),
    "enforcedNamespaceLabel": String("Label set to the monitor's namespace on every series.",
                                     pattern=LABEL_NAME_OR_EMPTY_PATTERN),
    "enforcedSampleLimit": Int64("Sample limit imposed on every scrape.", minimum=0, maximum=FLOAT64_EXACT),
    "enforcedTargetLimit": Int64("Target limit imposed on every scrape.", minimum=0, maximum=FLOAT64_EXACT),
    "instanceSelector": Doc(LabelSelector, "MetricsInstances to use (unset selects none)."),
    "instanceNamespaceSelector": Doc(LabelSelector, "Namespaces to find MetricsInstances in (unset: the agent's namespace)."),
}, doc="Metrics collection: MetricsInstances, sharding and replication."),
    ("(has(self.shards) && self.shards > 1 ? self.shards : 1) * "
     "(has(self.replicas) && self.replicas > 0 ? self.replicas : 1) <= 1000",
     "shards × replicas must be at most 1000 metrics pods"))

LogsSubsystemSpec = Object({
    "clients": List(LogsClientSpec, "Loki clients for LogsInstances that define none.", max_items=MAX_CLIENTS),
    "logsExternalLabelName": String("External label naming the cluster (default cluster; empty disables).",
                                    pattern=LABEL_NAME_OR_EMPTY_PATTERN),
    "instanceSelector": Doc(LabelSelector, "LogsInstances to use (unset selects none)."),
    "instanceNamespaceSelector": Doc(LabelSelector, "Namespaces to find LogsInstances in (unset: the agent's namespace)."),
    "ignoreNamespaceSelectors": Bool("Collect only each PodLogs' own namespace."),
    "enforcedNamespaceLabel": String("Label set to the PodLogs' namespace on every stream.",
                                     pattern=LABEL_NAME_OR_EMPTY_PATTERN),
}, doc="Log collection: LogsInstances run by one DaemonSet.")

IntegrationsSubsystemSpec = Object({
    "selector": Doc(LabelSelector, "Integrations to run (unset selects none)."),
    "namespaceSelector": Doc(LabelSelector, "Namespaces to find Integrations in (unset: the agent's namespace; {} all)."),
}, doc="Integrations run by a Deployment and a DaemonSet.")

GrafanaAgentSpec = Object({
    "logLevel": String("Agent log level: debug, info, warn or error.", pattern=r"^(debug|info|warn|error)?$"),
    "logFormat": String("Agent log format: logfmt or json.", pattern=r"^(logfmt|json)?$"),
    "apiServer": Doc(APIServerConfig, "API server used for service discovery (default in-cluster)."),
    "podMetadata": Doc(EmbeddedObjectMetadata, "Labels and annotations added to every agent pod."),
    "version": String("Grafana Agent image tag (default v0.44.8)."),
    "paused": Bool("Stop reconciling this agent; generated objects are left as they are."),
    "image": String("Full agent image, overriding version."),
    "configReloaderVersion": String("Config reloader image tag (default v0.67.1)."),
    "configReloaderImage": String("Full config reloader image."),
    "imagePullSecrets": List(LocalObjectReference, "Image pull Secrets of the agent pods."),
    "storage": Doc(StorageSpec, "Storage of the metrics WAL (default emptyDir)."),
    "volumes": List(Volume, "Volumes added to every agent pod."),
    "volumeMounts": List(VolumeMount, "Volume mounts added to both agent containers."),
    "resources": Opaque("Resources of the grafana-agent container (Kubernetes ResourceRequirements)."),
    "nodeSelector": StringMap("Node selector of the agent pods."),
    "serviceAccountName": String("ServiceAccount of the agent pods.", pattern=SUBDOMAIN_OR_EMPTY_PATTERN,
                                 max_length=253),
    "secrets": List(String(), "Secrets mounted at /var/lib/grafana-agent/extra-secrets/<name>."),
    "configMaps": List(String(), "ConfigMaps mounted at /var/lib/grafana-agent/extra-configmaps/<name>."),
    "affinity": Opaque("Affinity of the agent pods (Kubernetes Affinity)."),
    "tolerations": List(Opaque(), "Tolerations of the agent pods."),
    "topologySpreadConstraints": List(Opaque(), "Topology spread constraints of the agent pods."),
    "securityContext": Opaque("Pod security context of the agent pods."),
    "containers": List(Container, "Containers merged by name into the generated ones, or added."),
    "initContainers": List(Container, "Init containers of the agent pods."),
    "priorityClassName": String("Priority class of the agent pods.", pattern=SUBDOMAIN_OR_EMPTY_PATTERN,
                                max_length=253),
    "runtimeClassName": String("Runtime class of the agent pods.", pattern=SUBDOMAIN_OR_EMPTY_PATTERN,
                               max_length=253),
    "portName": String("Name of the agent's HTTP port (default http-metrics): an IANA service name.",
                       pattern=r"^([a-z0-9]([-a-z0-9]*[a-z0-9])?)?$", max_length=15),
    "metrics": MetricsSubsystemSpec,
    "logs": LogsSubsystemSpec,
    "integrations": IntegrationsSubsystemSpec,
    "enableConfigReadAPI": Bool("Expose the agent's config read API.", default=False),
    "disableReporting": Bool("Disable the agent's anonymous usage reporting.", default=False),
    "disableSupportBundle": Bool("Disable the agent's support bundle endpoint.", default=False),
}, doc="Desired state of a Grafana Agent deployment.")

Condition = Object({
    "type": String("Reconciled or Ready."),
    "status": String(enum=["True", "False", "Unknown"]),
    "reason": String("Machine-readable reason in CamelCase."),
    "message": String("Human-readable details (the error when reconciling failed)."),
    "observedGeneration": Int64("metadata.generation the condition was computed from."),
    "lastTransitionTime": String("When status last changed.", format="date-time"),
}, required=["status", "type"])

# Written by the operator only. Members beyond the conditions are kept as written so
# that a newer operator's status survives an older CRD.
StatusProblem = Object({
    "kind": String("Kind of the member with the problem."),
    "namespace": String("Namespace of the member."),
    "name": String("Name of the member."),
    "field": String("JSON path of the offending field inside the member, when known."),
    "message": String("What is wrong and what to do (never secret values)."),
    "severity": String(enum=["Error", "Warning"]),
}, required=["kind", "name", "message", "severity"])

GrafanaAgentStatus = Object({
    "observedGeneration": Int64("metadata.generation last reconciled."),
    "conditions": List(Condition, "Reconciled and Ready conditions; Backend, and AlloyTranslation "
                       "while deployed with Grafana Alloy.", list_type="map", map_keys=["type"]),
    "backend": String("The backend of the last reconcile: static (Grafana Agent) or alloy.",
                      enum=["static", "alloy"]),
    "metricsInstances": Int64("MetricsInstances in the hierarchy."),
    "serviceMonitors": Int64("ServiceMonitors, summed over MetricsInstances."),
    "podMonitors": Int64("PodMonitors, summed over MetricsInstances."),
    "probes": Int64("Probes, summed over MetricsInstances."),
    "logsInstances": Int64("LogsInstances in the hierarchy."),
    "podLogs": Int64("PodLogs, summed over LogsInstances."),
    "integrations": Int64("Integrations in the hierarchy."),
    "problems": List(StatusProblem, "Up to 50 problems with members of the hierarchy; the "
                     "rest of the hierarchy still deploys."),
}, doc="Observed state, written by the operator.", preserve=True)

MetricsInstanceSpec = Object({
    "walTruncateFrequency": Doc(GoDuration, "How often the WAL is truncated (a Go duration)."),
    "minWALTime": Doc(GoDuration, "Minimum age of samples kept in the WAL (a Go duration)."),
    "maxWALTime": Doc(GoDuration, "Maximum age of samples kept in the WAL (a Go duration)."),
    "remoteFlushDeadline": Doc(GoDuration, "Deadline for flushing remote writes at shutdown (a Go duration)."),
    "writeStaleOnShutdown": Bool("Write staleness markers at shutdown."),
    "serviceMonitorSelector": Doc(LabelSelector, "ServiceMonitors to scrape (unset selects none)."),
    "serviceMonitorNamespaceSelector": Doc(LabelSelector, "Namespaces of the ServiceMonitors (unset: this instance's namespace)."),
    "podMonitorSelector": Doc(LabelSelector, "PodMonitors to scrape (unset selects none)."),
    "podMonitorNamespaceSelector": Doc(LabelSelector, "Namespaces of the PodMonitors (unset: this instance's namespace)."),
    "probeSelector": Doc(LabelSelector, "Probes to scrape (unset selects none)."),
    "probeNamespaceSelector": Doc(LabelSelector, "Namespaces of the Probes (unset: this instance's namespace)."),
    "remoteWrite": List(RemoteWriteSpec, "Remote write targets of this instance.", max_items=MAX_CLIENTS),
    "additionalScrapeConfigs": Doc(SecretKeySelector, "Secret key holding a YAML list of extra scrape configs."),
}, doc="One metrics instance: what to scrape and where to send it.")

LogsInstanceSpec = Object({
    "clients": List(LogsClientSpec, "Loki clients (default: the GrafanaAgent's spec.logs.clients).",
                    max_items=MAX_CLIENTS),
    "podLogsSelector": Doc(LabelSelector, "PodLogs to collect (unset selects none)."),
    "podLogsNamespaceSelector": Doc(LabelSelector, "Namespaces of the PodLogs (unset: this instance's namespace)."),
    "additionalScrapeConfigs": Doc(SecretKeySelector, "Secret key holding a YAML list of extra scrape configs."),
    "targetConfig": Object({"syncPeriod": GoDuration}, doc="Target discovery settings."),
}, doc="One logs instance: which PodLogs to collect and where to send them.")

PipelineStageSpec = Rules(Object({
    # Kept as given (an empty object enables the stage): a CEL rule cannot read an object
    # type without properties.
    "cri": Opaque("Parse CRI log lines."),
    "docker": Opaque("Parse Docker log lines."),
    "drop": Object({
        "source": String(), "expression": String(), "value": String(),
        "olderThan": GoDuration, "longerThan": String(), "dropCounterReason": String(),
    }),
    "json": Object({"source": String(), "expressions": StringMap()}),
    "labelAllow": List(String()),
    "labelDrop": List(String()),
    "labels": StringMap(),
    "limit": Object({"rate": Integer(minimum=1), "burst": Integer(minimum=1), "drop": Bool()}),
    "match": Object({
        "selector": String(), "pipelineName": String(), "action": String(pattern=r"^(keep|drop)?$"),
        "dropCounterReason": String(),
        "stages": String("YAML list of pipeline stages, as a string."),
    }, required=["selector"]),
    "metrics": Map(Object({
        "type": String(pattern=r"^(?i)(counter|gauge|histogram)$"), "description": String(),
        "prefix": String(), "source": String(),
        "maxIdleDuration": GoDuration, "matchAll": Bool(), "countEntryBytes": Bool(),
        "value": String(), "action": String(), "buckets": List(String()),
    }, required=["action", "type"])),
    "multiline": Object({"firstLine": String(), "maxWaitTime": GoDuration, "maxLines": Integer(minimum=0)},
                        required=["firstLine"]),
    "output": Object({"source": String()}, required=["source"]),
    "pack": Object({"labels": List(String()), "ingestTimestamp": Bool()}, required=["labels"]),
    "regex": Object({"source": String(), "expression": String()}, required=["expression"]),
    "replace": Object({"source": String(), "expression": String(), "replace": String()},
                      required=["expression"]),
    "template": Object({"source": String(), "template": String()}, required=["source", "template"]),
    "tenant": Rules(Object({"label": String(), "source": String(), "value": String()}),
                    ("(has(self.label) ? 1 : 0) + (has(self.source) ? 1 : 0) + (has(self.value) ? 1 : 0) == 1",
                     "set exactly one of label, source or value")),
    "timestamp": Object({
        "source": String(), "format": String(), "fallbackFormats": List(String()),
        "location": String(), "actionOnFailure": String(pattern=r"^(fudge|skip)?$"),
    }, required=["format", "source"]),
}, doc="One pipeline stage: exactly one member (the agent refuses a list item with several)."),
    ("(has(self.cri) ? 1 : 0) + (has(self.docker) ? 1 : 0) + (has(self.drop) ? 1 : 0) + "
     "(has(self.json) ? 1 : 0) + (has(self.labelAllow) ? 1 : 0) + (has(self.labelDrop) ? 1 : 0) + "
     "(has(self.labels) ? 1 : 0) + (has(self.limit) ? 1 : 0) + (has(self.match) ? 1 : 0) + "
     "(has(self.metrics) ? 1 : 0) + (has(self.multiline) ? 1 : 0) + (has(self.output) ? 1 : 0) + "
     "(has(self.pack) ? 1 : 0) + (has(self.regex) ? 1 : 0) + (has(self.replace) ? 1 : 0) + "
     "(has(self.template) ? 1 : 0) + (has(self.tenant) ? 1 : 0) + (has(self.timestamp) ? 1 : 0) <= 1",
     "a pipeline stage sets at most one stage kind; split it into separate list items"))

PodLogsSpec = Object({
    "jobLabel": String("Pod label whose value becomes the job label."),
    "podTargetLabels": List(String(), "Pod labels copied onto the log streams."),
    "selector": Doc(LabelSelector, "Pods to collect logs from."),
    "namespaceSelector": Doc(NamespaceSelector, "Namespaces to collect from (default: this object's)."),
    "pipelineStages": List(PipelineStageSpec, "Processing stages applied to every line.", max_items=MAX_RULES),
    "relabelings": RelabelList("Relabelings applied to discovered targets."),
}, required=["selector"], doc="Which pods' logs to collect and how to process them.")

IntegrationSpec = Object({
    "name": String("Integration name, e.g. node_exporter.", pattern=r"^[a-z][a-z0-9_]*$"),
    "type": Object({
        "allNodes": Bool("Run on every node (DaemonSet) instead of once (Deployment)."),
        "unique": Bool("At most one Integration of this name per agent."),
    }, doc="How the integration is deployed."),
    "config": Opaque("Integration configuration, passed to the agent as given."),
    "volumes": List(Volume, "Volumes added to the pods running this integration."),
    "volumeMounts": List(VolumeMount, "Volume mounts added to the agent container."),
    "secrets": List(SecretKeySelector, "Secret keys mounted under /etc/grafana-agent/integrations/secrets."),
    "configMaps": List(ConfigMapKeySelector, "ConfigMap keys mounted under /etc/grafana-agent/integrations/configMaps."),
}, required=["config", "name", "type"], doc="One Grafana Agent integration.")

# --- Prometheus Operator types (monitoring.coreos.com/v1, v0.66 fields) --------------

_endpoint_common = {
    "port": String("Name of the port to scrape."),
    "targetPort": IntOrString("Name or number of the target port (when port is unset)."),
    "path": String("HTTP path to scrape (default /metrics).", pattern=r"^(/.*)?$"),
    "scheme": String("HTTP scheme.", enum=["http", "https"]),
    "params": Map(List(String()), "URL parameters."),
    "interval": Doc(Duration, "Scrape interval."),
    "scrapeTimeout": Doc(Duration, "Scrape timeout."),
    "bearerTokenSecret": Doc(SecretKeySelector, "Secret key holding the bearer token."),
    "authorization": Doc(SafeAuthorization, "Authorization header (its Secret is mounted, not rendered)."),
    "honorLabels": Bool("Keep the target's labels on conflict."),
    "honorTimestamps": Bool("Keep the target's timestamps."),
    "basicAuth": Doc(BasicAuth, "Basic authentication."),
    "oauth2": Doc(OAuth2, "OAuth2 (its Secrets are mounted, not rendered)."),
    "metricRelabelings": RelabelList("Relabelings applied to scraped samples."),
    "relabelings": RelabelList("Relabelings applied to targets."),
    "proxyUrl": String("Proxy URL (http, https or socks5).", pattern=PROXY_URL_PATTERN),
    "followRedirects": Bool("Follow HTTP redirects."),
    "enableHttp2": Bool("Use HTTP/2."),
    "filterRunning": Bool("Drop targets of pods that are not running."),
}

Endpoint = Object(dict(_endpoint_common, **{
    "tlsConfig": Doc(TLSConfig, "TLS settings."),
    "bearerTokenFile": String("File holding the bearer token."),
}))

PodMetricsEndpoint = Object(dict(_endpoint_common, **{
    "tlsConfig": Doc(SafeTLSConfig, "TLS settings."),
}))

_monitor_limits = {
    "sampleLimit": Int64("Per-scrape limit on accepted samples.", minimum=0, maximum=FLOAT64_EXACT),
    "targetLimit": Int64("Limit on the number of scraped targets.", minimum=0, maximum=FLOAT64_EXACT),
    "labelLimit": Int64("Per-scrape limit on labels (not rendered)."),
    "labelNameLengthLimit": Int64("Per-scrape limit on label name length (not rendered)."),
    "labelValueLengthLimit": Int64("Per-scrape limit on label value length (not rendered)."),
}

_attach_metadata = Object({"node": Bool()}, doc="Not rendered.")

ServiceMonitorSpec = Object(dict(_monitor_limits, **{
    "jobLabel": String("Service label whose value becomes the job label."),
    "targetLabels": List(String(), "Service labels copied onto the targets."),
    "podTargetLabels": List(String(), "Pod labels copied onto the targets."),
    "endpoints": List(Endpoint, "Endpoints to scrape.", max_items=MAX_ENDPOINTS),
    "selector": Doc(LabelSelector, "Services to scrape."),
    "namespaceSelector": Doc(NamespaceSelector, "Namespaces of the Services (default: this object's)."),
    "attachMetadata": _attach_metadata,
}), required=["endpoints", "selector"])

PodMonitorSpec = Object(dict(_monitor_limits, **{
    "jobLabel": String("Pod label whose value becomes the job label."),
    "podTargetLabels": List(String(), "Pod labels copied onto the targets."),
    "podMetricsEndpoints": List(PodMetricsEndpoint, "Endpoints to scrape.", max_items=MAX_ENDPOINTS),
    "selector": Doc(LabelSelector, "Pods to scrape."),
    "namespaceSelector": Doc(NamespaceSelector, "Namespaces of the pods (default: this object's)."),
    "attachMetadata": _attach_metadata,
}), required=["podMetricsEndpoints", "selector"])

ProbeSpec = Rules(Object(dict(_monitor_limits, **{
    "jobName": String("Job name."),
    "prober": Object({
        "url": String("host:port of the prober.", pattern=HOST_PORT_PATTERN),
        "scheme": String(enum=["http", "https"]),
        "path": String(default="/probe", pattern=r"^(/.*)?$"),
        "proxyUrl": String("Not rendered."),
    }, required=["url"], doc="The blackbox-exporter-style prober."),
    "module": String("Prober module."),
    "targets": Object({
        "staticConfig": Object({
            "static": List(String(), "Targets."),
            "labels": StringMap("Labels of every target."),
            "relabelingConfigs": RelabelList(None),
        }, doc="Static targets (wins over ingress)."),
        "ingress": Object({
            "selector": LabelSelector,
            "namespaceSelector": NamespaceSelector,
            "relabelingConfigs": RelabelList(None),
        }, doc="Ingresses to probe."),
    }, doc="What to probe."),
    "interval": Doc(Duration, "Probe interval."),
    "scrapeTimeout": Doc(Duration, "Probe timeout."),
    "tlsConfig": Doc(SafeTLSConfig, "TLS settings."),
    "bearerTokenSecret": Doc(SecretKeySelector, "Secret key holding the bearer token."),
    "basicAuth": Doc(BasicAuth, "Basic authentication."),
    "oauth2": Doc(OAuth2, "Not rendered."),
    "authorization": Doc(SafeAuthorization, "Not rendered."),
    "metricRelabelings": RelabelList("Not rendered."),
})), ("has(self.targets) && (has(self.targets.staticConfig) || has(self.targets.ingress))",
      "a Probe needs targets.staticConfig or targets.ingress"))

# --- the custom resources -------------------------------------------------------------

_ready_columns = [
    {"name": "Reconciled", "type": "string",
     "jsonPath": '.status.conditions[?(@.type=="Reconciled")].status',
     "description": "Whether the last reconcile succeeded."},
    {"name": "Ready", "type": "string",
     "jsonPath": '.status.conditions[?(@.type=="Ready")].status',
     "description": "Whether every generated workload has its replicas ready."},
    {"name": "Backend", "type": "string", "jsonPath": ".status.backend",
     "description": "static (Grafana Agent) or alloy (Grafana Alloy)."},
    {"name": "Shards", "type": "integer", "jsonPath": ".spec.metrics.shards", "priority": 1,
     "description": "Number of metrics shards."},
    {"name": "Replicas", "type": "integer", "jsonPath": ".spec.metrics.replicas", "priority": 1,
     "description": "Replicas per metrics shard."},
    {"name": "Paused", "type": "boolean", "jsonPath": ".spec.paused", "priority": 1},
    {"name": "Age", "type": "date", "jsonPath": ".metadata.creationTimestamp"},
]

_integration_columns = [
    {"name": "Integration", "type": "string", "jsonPath": ".spec.name"},
    {"name": "All-Nodes", "type": "boolean", "jsonPath": ".spec.type.allNodes"},
    {"name": "Age", "type": "date", "jsonPath": ".metadata.creationTimestamp"},
]

GRAFANA_GROUP = "monitoring.grafana.com"
PROMETHEUS_GROUP = "monitoring.coreos.com"

# Each entry: the CRD identity and its top-level schema members.
RESOURCES = [
    dict(group=GRAFANA_GROUP, version="v1alpha1", kind="GrafanaAgent", plural="grafanaagents",
         singular="grafanaagent", categories=["agent-operator"], spec=GrafanaAgentSpec,
         status=GrafanaAgentStatus, columns=_ready_columns,
         doc="A Grafana Agent deployment: the root of a hierarchy of MetricsInstances, "
             "LogsInstances and Integrations the operator turns into agent workloads."),
    dict(group=GRAFANA_GROUP, version="v1alpha1", kind="MetricsInstance", plural="metricsinstances",
         singular="metricsinstance", categories=["agent-operator"], spec=MetricsInstanceSpec,
         doc="A metrics instance run by every metrics shard of the GrafanaAgents selecting it."),
    dict(group=GRAFANA_GROUP, version="v1alpha1", kind="LogsInstance", plural="logsinstances",
         singular="logsinstance", categories=["agent-operator"], spec=LogsInstanceSpec,
         doc="A logs instance run by the logs DaemonSet of the GrafanaAgents selecting it."),
    dict(group=GRAFANA_GROUP, version="v1alpha1", kind="PodLogs", plural="podlogs",
         singular="podlogs", categories=["agent-operator"], spec=PodLogsSpec,
         doc="Pod logs to collect, selected by LogsInstances."),
    dict(group=GRAFANA_GROUP, version="v1alpha1", kind="Integration", plural="integrations",
         singular="integration", categories=["agent-operator"], spec=IntegrationSpec,
         columns=_integration_columns,
         doc="A Grafana Agent integration (e.g. node_exporter) run by the GrafanaAgents selecting it."),
    dict(group=PROMETHEUS_GROUP, version="v1", kind="ServiceMonitor", plural="servicemonitors",
         singular="servicemonitor", short_names=["smon"], categories=["prometheus-operator"],
         spec=ServiceMonitorSpec, spec_required=True, foreign=True,
         doc="Prometheus Operator ServiceMonitor: Services whose endpoints are scraped."),
    dict(group=PROMETHEUS_GROUP, version="v1", kind="PodMonitor", plural="podmonitors",
         singular="podmonitor", short_names=["pmon"], categories=["prometheus-operator"],
         spec=PodMonitorSpec, spec_required=True, foreign=True,
         doc="Prometheus Operator PodMonitor: pods that are scraped."),
    dict(group=PROMETHEUS_GROUP, version="v1", kind="Probe", plural="probes",
         singular="probe", short_names=["prb"], categories=["prometheus-operator"],
         spec=ProbeSpec, spec_required=True, foreign=True,
         doc="Prometheus Operator Probe: static targets or Ingresses probed through a prober."),
]
