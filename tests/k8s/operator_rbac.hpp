// The operator's identity in integration tests: the Namespace, ServiceAccount and RBAC
// roles and bindings of deploy/ (read from the manifests, never copied), installed into
// a test cluster, and a token of that ServiceAccount from the TokenRequest API. A client
// on it has exactly the permissions a user's installation grants, so a verb missing from
// deploy/ fails the test that needs it (403).
#pragma once

#include <string>
#include <vector>

#include <boost/json/value.hpp>

#include "k8s/kubeconfig.hpp"
#include "tests/k8s/cluster.hpp"

namespace aop::testing {

// Namespace, ServiceAccount, (Cluster)Role and (Cluster)RoleBinding documents of the
// YAML files under deploy/ (examples/ and crds/ left out), in file order, one per kind,
// namespace and name.
std::vector<boost::json::value> deploy_rbac_objects(const std::string& source_dir);

struct OperatorIdentity {
  std::string ns;               // where the ServiceAccount lives (agent-operator)
  std::string service_account;  // agent-operator
  std::string user;             // system:serviceaccount:<ns>:<name>
  std::string token;
  k8s::ClientConfig config;  // the cluster's address with this token
};

// Creates what deploy_rbac_objects() returns (objects that exist already are kept: the
// real control plane is shared by a test process's tests) and gets a token for the one
// ServiceAccount. Throws when the manifests hold no ServiceAccount or the server refuses.
OperatorIdentity install_operator_rbac(const Cluster& cluster, const std::string& source_dir);

}  // namespace aop::testing
