// The output stage of `agent-operator render`: turns the objects the controllers would
// apply into manifests that `kubectl apply` (client- or server-side) and GitOps tools
// accept as they are, printed as one YAML stream or written one file per object.
#pragma once

#include <cstdio>
#include <string>
#include <vector>

#include <boost/json/object.hpp>

#include "net/result.hpp"

namespace aop::app {

// What render does with ownerReferences. The live controllers point every generated
// object at its root (the GrafanaAgent, or a source Namespace) by uid; the uid exists
// only in one cluster, and an empty one is rejected by the API server.
enum class OwnerReferences {
  omit,  // drop them all: the objects belong to the GitOps tool that applies them
  keep,  // keep those whose owner's uid was in the input (a `kubectl get -o yaml` dump of
         // the cluster the output is applied to); drop the others with a note
};

struct RenderOutput {
  OwnerReferences owner_references = OwnerReferences::omit;
  std::string output_dir;  // "" = one YAML stream on stdout
};

// Parses "omit" or "keep".
Result<OwnerReferences> parse_owner_references(std::string_view text);

// Applies the owner-reference policy and sorts the objects into their stable output order
// (kind, namespace, name, then apiVersion). Returns notes about dropped references, one per
// object, for stderr.
std::vector<std::string> prepare_for_apply(std::vector<boost::json::object>& objects,
                                           OwnerReferences mode);

// The file an object is written to in --output-dir: "<namespace>_<kind>_<name>.yaml"
// ("<kind>_<name>.yaml" when cluster-scoped), kind lower-cased. Namespaces and names are
// DNS names and kinds identifiers, none can hold '_', so the name is unambiguous.
std::string manifest_file_name(const boost::json::object& object);

// Every object as one multi-document YAML stream.
std::string yaml_stream(const std::vector<boost::json::object>& objects);

// Writes one file per object into `dir` (created if missing), each starting with a header
// comment that marks it as render's. With `prune`, files carrying that header that this run
// did not write are removed (a root that went away takes its files with it); render passes
// prune only when every root rendered, so a failing root keeps its last good files. Files
// without the header are never touched.
Result<void> write_manifest_dir(const std::string& dir,
                                const std::vector<boost::json::object>& objects, bool prune);

}  // namespace aop::app
