// The rules a Kubernetes API server applies to the fields the operator copies from user
// input into the objects it writes (pod templates, Services, PVC templates, metadata).
// A value the API server would refuse makes every apply of that object fail and leaves
// the root stuck, so these are checked before anything is written. Messages follow
// apimachinery's wording where it has one.
//
// Functions on verbatim JSON (a Volume, a Container, a Toleration ...) report through a
// Checker positioned at the value; functions on scalars return a Complaint.
#pragma once

#include <set>
#include <string>
#include <string_view>

#include <boost/json/value.hpp>

#include "reconcile/validation/report.hpp"

namespace aop::validation {

// ---- names -----------------------------------------------------------------------------
// RFC 1123 label: [a-z0-9]([-a-z0-9]*[a-z0-9])?, at most 63 characters.
Complaint check_dns_label(std::string_view s);
bool is_dns_label(std::string_view s);
// RFC 1123 subdomain: dot-separated labels, at most 253 characters.
Complaint check_dns_subdomain(std::string_view s);
// Label and annotation keys: [prefix/]name, prefix a DNS subdomain, name at most 63 of
// ([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9].
Complaint check_qualified_name(std::string_view s);
// Label values: at most 63, empty or ([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9].
Complaint check_label_value_k8s(std::string_view s);
// IANA service names (port names): at most 15 of [-a-z0-9], at least one letter, no
// hyphen at either end or next to another.
Complaint check_port_name(std::string_view s);
// Environment variable names: [-._a-zA-Z][-._a-zA-Z0-9]*.
Complaint check_env_var_name(std::string_view s);
// A container image reference: non-empty, no surrounding whitespace, and the
// distribution reference grammar ([registry/]path[:tag][@digest], lower-case path).
Complaint check_image(std::string_view s);
// An image tag: [A-Za-z0-9_][A-Za-z0-9_.-]{0,127}.
Complaint check_image_tag(std::string_view s);

// ---- quantities ------------------------------------------------------------------------
// resource.Quantity's grammar: a signed decimal number and a suffix (Ki Mi Gi Ti Pi Ei,
// n u m k M G T P E, or e/E exponent), e.g. 100m, 1.5Gi, 2e3.
Complaint check_quantity(std::string_view s);
// The quantity's value, for comparisons (requests ≤ limits); nullopt when invalid.
std::optional<long double> quantity_value(std::string_view s);

// ---- objects (verbatim JSON) ------------------------------------------------------------
// Labels (keys qualified names, values label values) of a map.
void check_labels(Checker& c, const boost::json::value& labels);
// Annotations: keys qualified names, total size of keys and values ≤ 256 KiB.
void check_annotations(Checker& c, const boost::json::value& annotations);
// A node selector (label keys and values).
void check_node_selector(Checker& c, const boost::json::value& selector);
// One Toleration.
void check_toleration(Checker& c, const boost::json::value& toleration);
// ResourceRequirements: resource names, quantities ≥ 0, requests ≤ limits.
void check_resources(Checker& c, const boost::json::value& resources);
// One Volume: a DNS-label name and exactly one volume source with its required members.
void check_volume(Checker& c, const boost::json::value& volume);
// One VolumeMount: name among `volumes`, a mountPath not in `taken_paths` (added to it),
// a relative subPath without `..`, a known mountPropagation.
void check_volume_mount(Checker& c, const boost::json::value& mount,
                        const std::set<std::string, std::less<>>& volumes,
                        std::set<std::string, std::less<>>& taken_paths);
// One container: name, image (when `image_required`), imagePullPolicy, ports, env,
// resources, volume mounts (against `volumes`; `taken_paths` holds mount paths the
// container already has).
void check_container(Checker& c, const boost::json::value& container, bool image_required,
                     const std::set<std::string, std::less<>>& volumes,
                     std::set<std::string, std::less<>> taken_paths);
// Affinity: node selector requirements and terms, pod (anti-)affinity terms.
void check_affinity(Checker& c, const boost::json::value& affinity);
// One TopologySpreadConstraint.
void check_topology_spread_constraint(Checker& c, const boost::json::value& constraint);
// A PodSecurityContext: ids ≥ 0, known fsGroupChangePolicy.
void check_pod_security_context(Checker& c, const boost::json::value& context);
// A PersistentVolumeClaim template: metadata.name a DNS label, access modes, a positive
// storage request.
void check_pvc_template(Checker& c, const boost::json::value& pvc);
// A label selector (matchLabels, matchExpressions with In/NotIn/Exists/DoesNotExist).
void check_label_selector(Checker& c, const boost::json::value& selector);

}  // namespace aop::validation
