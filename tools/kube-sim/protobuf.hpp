// Decoding of Kubernetes protobuf request bodies (`application/vnd.kubernetes.protobuf`:
// the "k8s\0" magic, a runtime.Unknown envelope, the object message) into the JSON an
// equivalent JSON request would carry. kubectl's typed commands (`kubectl create
// namespace|configmap|secret|serviceaccount|deployment`) send protobuf; everything else
// kubectl and the client libraries send is JSON.
//
// Only the kinds above are described (field tables transcribed from k8s.io/api's
// generated.proto); fields not in the tables are skipped. Responses are always JSON,
// which every client accepts.
#pragma once

#include <string_view>

#include <boost/json/object.hpp>

#include "net/result.hpp"

namespace aop::sim {

Result<boost::json::object> decode_k8s_protobuf(std::string_view body);

}  // namespace aop::sim
