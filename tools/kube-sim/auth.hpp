// Authentication and RBAC authorization, as kube-apiserver does them with
// --token-auth-file, ServiceAccount tokens from the TokenRequest API and
// --authorization-mode=RBAC (see README.md, "Authentication and RBAC").
//
//   Authenticator auth;  auth.set_admin_token("t");  auth.load_token_file(path);
//   auto user = auth.authenticate("Bearer t");               // UserInfo or nullopt
//   auto d = authorize(store, attributes);                   // RBAC over stored objects
//   if (!d.allowed) return error_response(forbidden_error(attributes));
//
// Pure over values and the store; the request path in api.cpp decides when to ask.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "net/result.hpp"
#include "tools/kube-sim/api_error.hpp"
#include "tools/kube-sim/store.hpp"

namespace aop::sim {

struct UserInfo {
  std::string name;  // "admin", "system:serviceaccount:ns:name", "system:anonymous"
  std::string uid;
  std::vector<std::string> groups;

  bool in_group(std::string_view g) const;
  static UserInfo anonymous();
};

class Authenticator {
 public:
  // --token: the administrator's token (user "admin", group system:masters).
  void set_admin_token(const std::string& token);
  // --token-file: kube-apiserver's --token-auth-file format, one `token,user,uid[,"g1,g2"]`
  // per line (blank lines and lines starting with # are skipped). Errors name the line.
  Result<void> load_token_file(const std::string& path);
  Result<void> load_token_csv(std::string_view text, const std::string& origin);
  // A new token for ServiceAccount ns/name (TokenRequest); it never expires here.
  std::string issue_service_account_token(const std::string& ns, const std::string& name,
                                          const std::string& uid);

  // True when an administrator token or a token file is configured: requests then need
  // a valid token (issued ServiceAccount tokens alone do not make credentials required).
  bool required() const { return configured_; }
  // The user an `Authorization` header value names; nullopt for a missing or unknown
  // bearer token.
  std::optional<UserInfo> authenticate(std::string_view authorization) const;

 private:
  std::map<std::string, UserInfo, std::less<>> tokens_;
  std::uint64_t issued_ = 0;
  bool configured_ = false;
};

// What a request asks to do, in RBAC's terms.
struct RequestAttributes {
  UserInfo user;
  bool resource_request = true;
  std::string verb;  // get list watch create update patch delete deletecollection
  std::string group;
  std::string resource;
  std::string subresource;
  std::string ns;    // "" for cluster-scoped kinds and all-namespace lists
  std::string name;  // "" for create, list, watch, deletecollection
  std::string path;  // non-resource requests
};

// RBAC: allowed when a ClusterRoleBinding (any namespace) or a RoleBinding in the
// request's namespace binds the user, one of its groups or its ServiceAccount to a role
// with a matching rule. Members of system:masters are always allowed. Aggregated
// ClusterRoles (aggregationRule) are not resolved.
bool authorize(const Store& store, const RequestAttributes& a);

// kube-apiserver's 403 for a denied request, word for word.
ApiError forbidden_error(const RequestAttributes& a);

}  // namespace aop::sim
