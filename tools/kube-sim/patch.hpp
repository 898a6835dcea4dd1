// The three PATCH formats kube-apiserver accepts for JSON documents:
//  - JSON merge patch (RFC 7386): objects merge, null deletes, everything else replaces;
//  - JSON patch (RFC 6902): add/remove/replace/move/copy/test with JSON pointers;
//  - strategic merge patch, for built-in kinds only: like a merge patch, but lists whose
//    Go type declares a patch merge key (containers by name, env by name, volumeMounts by
//    mountPath, ...) merge item by item, `metadata.finalizers` merges as a set, and the
//    `$patch`, `$retainKeys`, `$setElementOrder/<list>` and
//    `$deleteFromPrimitiveList/<list>` directives that kubectl emits are honoured.
// The merge keys come from a small table of the list fields kubectl and operators touch
// (see list_merge_key in patch.cpp) instead of the full OpenAPI schema.
#pragma once

#include <boost/json/value.hpp>

#include "net/result.hpp"

namespace aop::sim {

Result<boost::json::value> apply_merge_patch(boost::json::value target,
                                             const boost::json::value& patch);

Result<boost::json::value> apply_json_patch(boost::json::value target,
                                            const boost::json::value& patch);

Result<boost::json::value> apply_strategic_merge_patch(boost::json::value target,
                                                       const boost::json::value& patch);

// Computes a JSON merge patch that turns `from` into `to` (used by tests and by
// `kubectl`-style tooling in this repo's tests).
boost::json::value create_merge_patch(const boost::json::value& from, const boost::json::value& to);

}  // namespace aop::sim
