// Why a reconcile did not reach the desired state, as an error enum in the "aop.reconcile"
// category (boost::system::error_code). Controllers tell failures apart by these values,
// never by comparing message or reason strings; reason() is the CamelCase reason of the
// root's status condition and Warning Event for each.
#pragma once

#include <string>
#include <string_view>
#include <type_traits>

#include <boost/system/error_code.hpp>

namespace aop::runtime {

enum class Errc {
  invalid_spec = 1,         // the root itself cannot be decoded: only an edit fixes it
  validation_failed,        // a root-level value (the root, an instance) fails its consumer's
                            // rule: fixed by an edit or by a referenced object appearing
  discovery_failed,         // reading the hierarchy failed (invalid selector, lookup error)
  asset_resolution_failed,  // a referenced Secret or ConfigMap lacks the referenced key
  asset_read_failed,        // reading a referenced Secret or ConfigMap from the API failed
  render_failed,            // the configuration could not be rendered
  invalid_name,             // a generated name the API server would refuse: only an edit fixes it
  apply_failed,             // the API server refused a write
  status_write_failed,      // the root's status could not be written
  invalid_backend,          // the root names a backend that does not exist: only an edit fixes it
  translation_failed,       // the configuration has no translation for the root's backend
  not_owned,                // a generated object's name is taken by an object that is not the
                            // root's (a user's, another root's): it is left as it is
};

const boost::system::error_category& reconcile_category() noexcept;

inline boost::system::error_code make_error_code(Errc e) noexcept {
  return {static_cast<int>(e), reconcile_category()};
}

// The condition and Event reason: "InvalidSpec", "DiscoveryFailed", ...
std::string_view reason(Errc e) noexcept;

// A failure as it reaches a user: what kind of failure, and what failed where (the
// message names the object and field, never secret data).
struct Failure {
  Errc code = Errc::apply_failed;
  std::string message;
  bool operator==(const Failure&) const = default;
};

}  // namespace aop::runtime

namespace boost::system {
template <>
struct is_error_code_enum<aop::runtime::Errc> : std::true_type {};
}  // namespace boost::system
