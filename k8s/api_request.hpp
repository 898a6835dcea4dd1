// The pure parts of talking to the API server, kept apart from the HTTP client so they
// are unit-tested as plain functions: resource paths and query strings, metav1.Status
// parsing, discovery documents, and the retry policy.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <boost/json/fwd.hpp>

#include "k8s/api_client.hpp"
#include "net/clock.hpp"

namespace aop::k8s {

// The Accept headers of metadata-only requests (PartialObjectMetadata), served by every
// API server since Kubernetes 1.15.
inline constexpr std::string_view kAcceptMetadataList =
    "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1";
inline constexpr std::string_view kAcceptMetadata =
    "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1";

// Percent-encodes a path segment or query value (RFC 3986 unreserved kept).
std::string url_escape(std::string_view s);

// "/api/v1/namespaces/ns/pods/name/status" or "/apis/apps/v1/deployments". `ns` is
// ignored for cluster-scoped resources; `name` and `subresource` may be empty.
std::string resource_path(const ResourceInfo& info, std::string_view ns, std::string_view name = {},
                          std::string_view subresource = {});

// "?labelSelector=...&limit=500&continue=..." ("" when there is nothing to add).
std::string list_query(const ListOptions& options, std::string_view continue_token);
// "?watch=1&resourceVersion=...&allowWatchBookmarks=true&timeoutSeconds=...".
std::string watch_query(const WatchOptions& options);
// "?propagationPolicy=..." etc. are in the DELETE body; this builds that body.
boost::json::value delete_body(const DeleteOptions& options);

// An ApiError from an HTTP status and a response body (a metav1.Status when the server
// sent one; otherwise the status line's meaning and the start of the body).
ApiError error_from_response(int status, std::string_view body);
// An ApiError for a failure to get any response.
ApiError error_from_transport(const boost::system::error_code& ec, std::string_view what);

// Retry-After as seconds ("120"); HTTP dates are not used by the API server. Capped.
std::optional<net::Duration> parse_retry_after(std::string_view value);

// Whether to retry a failed request. Pure: the caller counts attempts (at most
// `max_retries` retries) and draws the backoff delay from its own net::Backoff.
struct RetryPolicy {
  int max_retries = 5;
  // Retry-After is honoured up to this (a broken server must not park us for hours).
  net::Duration max_retry_after = std::chrono::seconds(60);
};

enum class RetryReason { none, throttled, server_error, connection };

// Why a failed request may be retried (none = it may not):
// - 429: the server rejected the request without acting on it (priority and fairness
//   or max-in-flight), so every verb may be retried, after Retry-After;
// - 5xx and connection errors: only reads (GET, LIST, WATCH), since a write may have
//   been applied before the failure;
// - a connection that failed before the request was written (`sent` false): any verb.
RetryReason retry_reason(const ApiError& error, bool read_only, bool sent);

// Registry entries from an APIResourceList (/api/v1 or /apis/<group>/<version>);
// subresources ("pods/status") mark has_status on their parent.
std::vector<ResourceInfo> parse_api_resource_list(const boost::json::value& list,
                                                  std::string_view group, std::string_view version);
// The "group/version" strings to query from an APIGroupList (/apis): the preferred
// version of each group, and every other served version too.
std::vector<std::string> parse_api_group_list(const boost::json::value& groups);

// Splits "apps/v1" into {"apps","v1"} and "v1" into {"","v1"}.
std::pair<std::string, std::string> split_api_version(std::string_view api_version);

}  // namespace aop::k8s
