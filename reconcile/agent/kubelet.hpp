// The kubelet Service and Endpoints (spec 3.13, flag `--kubelet-service=<ns>/<name>`):
// a headless Service plus an Endpoints object listing every Node, so that ServiceMonitors
// can scrape kubelet and cAdvisor metrics through ordinary endpoints discovery.
//
//   auto nodes = decode_kubelet_node(json)...;                // one per cached Node
//   Result<KubeletObjects> d = kubelet_objects(target, nodes); // desired Service + Endpoints
//   for (auto& r : d->refused) report(r);                      // addresses left out
//   if (kubelet_object_changed(live, d->service)) update(...); // update only on change
//
// Pure functions over values; the live controller (watching Nodes, create-or-update,
// conflict retry) lives in the runtime wiring.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <boost/json/object.hpp>
#include <boost/json/value.hpp>

#include "k8s/resource.hpp"
#include "net/result.hpp"

namespace aop::agent {

// What the kubelet objects need from one Node.
struct KubeletNode {
  std::string name;
  std::string uid;
  struct Address {
    std::string type;  // InternalIP, ExternalIP, Hostname, ...
    std::string address;
  };
  std::vector<Address> addresses;  // status.addresses, in the Node's order
};

// Reads metadata.name, metadata.uid and status.addresses of a Node. Errors name the JSON
// path (`status.addresses[1].type: expected string, got number`).
Result<KubeletNode> decode_kubelet_node(const boost::json::value& node);

// An address of a Node that the API server would refuse in an Endpoints
// (k8s/endpoint_ip.hpp: loopback, link-local, unspecified, link-local multicast, not an
// IP), so it is left out.
struct RefusedAddress {
  std::string node;
  std::string node_uid;
  std::string type;  // InternalIP or ExternalIP
  std::string address;
  std::string reason;  // the API server's words, e.g. "may not be in the loopback range ..."
};

struct KubeletAddress {
  std::optional<std::string> ip;        // what the Endpoints list; nullopt: the node is left out
  std::vector<RefusedAddress> refused;  // InternalIPs and ExternalIPs passed over
};

// The address the Endpoints list for a node: its first InternalIP the API server accepts,
// else its first such ExternalIP (upstream's order, skipping refused addresses), else
// none (the node is left out and its refused addresses say why). A node with neither an
// InternalIP nor an ExternalIP at all is an error naming it: it is still starting, and
// the reconcile fails and is retried, as upstream.
Result<KubeletAddress> kubelet_node_address(const KubeletNode& node);

struct KubeletObjects {
  boost::json::object service;    // v1 Service, headless, ports 10250/10255/4194
  boost::json::object endpoints;  // v1 Endpoints, one subset, addresses sorted by IP string
  // Addresses left out because the API server would refuse them, by node name. A node
  // that has a usable address besides is listed by it.
  std::vector<RefusedAddress> refused;
};

// The desired Service and Endpoints named `target.name` in `target.ns`. Labels are fixed
// (the operator's -labels flag is not applied) and there are no ownerReferences. A node
// without any InternalIP or ExternalIP fails the whole computation, as upstream; one
// whose addresses the API server would refuse is left out (upstream writes it and the
// API server refuses the whole Endpoints, taking every node's target away).
//
// With no Nodes at all the Endpoints has no subsets: an EndpointSubset without
// addresses is rejected by the API server, so upstream's empty subset could never be
// written (the only deviation from spec 3.13, and not observable on a valid cluster).
Result<KubeletObjects> kubelet_objects(const k8s::ObjectKey& target,
                                       const std::vector<KubeletNode>& nodes);

// True when `live` (the object as read from the API server) differs from `desired` in
// anything this controller owns: a desired label missing or different, the Service's
// type, clusterIP and ports, or the Endpoints' subsets. Fields the API server adds
// (resourceVersion, clusterIPs, ipFamilies, port protocols, ...) are not differences,
// so an unchanged node set causes no write.
bool kubelet_object_changed(const boost::json::object& live, const boost::json::object& desired);

}  // namespace aop::agent
