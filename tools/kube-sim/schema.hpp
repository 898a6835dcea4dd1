// Custom resource validation against a CRD version's `openAPIV3Schema`, in the order the
// API server applies it: prune unknown fields (unless x-kubernetes-preserve-unknown-fields),
// drop nulls where the schema is not nullable, apply `default`s, then validate types,
// required, enum, bounds, lengths, patterns and item counts. Field errors use
// apimachinery's wording (`spec.replicas in body must be of type integer: "string"`).
// Patterns are matched with RE2 (Go's regular expressions, as the API server's); CEL rules
// (x-kubernetes-validations) are evaluated when they fall in the subset of cel.hpp (others
// are accepted as written); anyOf/oneOf/allOf/not and formats are not checked.
#pragma once

#include <string>
#include <vector>

#include <boost/json/value.hpp>

#include "tools/kube-sim/api_error.hpp"

namespace aop::sim {

struct SchemaOutcome {
  std::vector<StatusCause> errors;         // validation failures (422 Invalid)
  std::vector<std::string> pruned_fields;  // paths of unknown fields that were removed
};

// Validates and normalises a whole custom resource in place. `schema` is the
// `openAPIV3Schema` of the version being written; apiVersion, kind and metadata at the
// root are never pruned.
SchemaOutcome apply_schema(const boost::json::value& schema, boost::json::value& object);

// Checks that a CRD's schema is usable (a subset of the API server's structural-schema
// checks): every node with properties is `type: object`, `type` values are known.
std::vector<StatusCause> check_structural_schema(const boost::json::value& schema,
                                                 const std::string& field_path);

}  // namespace aop::sim
