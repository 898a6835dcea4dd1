// kubeconfig and in-cluster configuration, and the token sources (static, file,
// exec plugin).
#include "k8s/kubeconfig.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <sstream>

#include <boost/json.hpp>

#include "k8s/base64.hpp"
#include "k8s/timestamp.hpp"
#include "k8s/yaml.hpp"
#include "net/http_client.hpp"
#include "net/log.hpp"
#include "net/pem.hpp"

extern char** environ;

namespace aop::k8s {
namespace json = boost::json;

namespace {

// Token, CA and namespace files of the service account, relative to its directory.
constexpr std::string_view kServiceAccountToken = "token";
constexpr std::string_view kServiceAccountCa = "ca.crt";
constexpr std::string_view kServiceAccountNamespace = "namespace";
// Largest exec plugin output accepted (an ExecCredential is a few kilobytes).
constexpr std::size_t kMaxExecOutput = 1u << 20;

// strerror is not thread-safe; this is.
std::string errno_text(int e) {
  return std::error_code(e, std::generic_category()).message();
}

Result<std::string> read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return make_error("cannot read " + path + ": " + errno_text(errno));
  std::ostringstream ss;
  ss << in.rdbuf();
  if (in.bad()) return make_error("cannot read " + path + ": " + errno_text(errno));
  return ss.str();
}

bool file_exists(const std::string& path) {
  return ::access(path.c_str(), F_OK) == 0;
}

std::string trim(std::string s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.pop_back();
  std::size_t i = 0;
  while (i < s.size() && std::isspace(static_cast<unsigned char>(s[i]))) ++i;
  return s.substr(i);
}

std::string dir_of(std::string_view path) {
  const auto slash = path.rfind('/');
  if (slash == std::string_view::npos) return ".";
  if (slash == 0) return "/";
  return std::string(path.substr(0, slash));
}

std::string resolve(std::string_view dir, std::string_view path) {
  if (path.empty() || path.front() == '/' || dir.empty()) return std::string(path);
  return (std::filesystem::path(dir) / path).lexically_normal().string();
}

// --- token sources -----------------------------------------------------------------

class StaticTokenSource final : public TokenSource {
 public:
  explicit StaticTokenSource(std::string token) : token_(std::move(token)) {}
  Result<std::string> token() override { return token_; }

 private:
  const std::string token_;
};

class FileTokenSource final : public TokenSource {
 public:
  FileTokenSource(std::string path, const net::Clock& clock)
      : path_(std::move(path)), clock_(clock) {}

  Result<std::string> token() override {
    const std::lock_guard lock(mutex_);
    const auto now = clock_.now();
    if (read_at_ && now - *read_at_ < kTokenFileRefresh) return token_;
    auto content = read_file(path_);
    if (!content) {
      if (read_at_) {
        // Keep the last good token: a rotation may be in progress (atomic symlink
        // swaps briefly leave no file). Try again at the next refresh.
        net::log::warn("cannot re-read the bearer token file; using the previous token",
                       {{"path", path_}, {"error", content.error().message}});
        read_at_ = now;
        return token_;
      }
      return make_error("bearer token file: " + content.error().message);
    }
    token_ = trim(std::move(*content));
    read_at_ = now;
    return token_;
  }

 private:
  const std::string path_;
  const net::Clock& clock_;
  std::mutex mutex_;  // owns token_ and read_at_
  std::string token_;
  std::optional<net::TimePoint> read_at_;
};

// Runs a command with extra environment and returns its stdout; its stderr goes to
// ours (plugins print prompts and diagnostics there, as with kubectl).
Result<std::string> run_command(const std::string& command, const std::vector<std::string>& args,
                                const std::vector<std::string>& extra_env) {
  int out[2];
  if (::pipe2(out, O_CLOEXEC) != 0) {
    return make_error("cannot create a pipe: " + errno_text(errno));
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, out[1], STDOUT_FILENO);
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);

  // The plugin inherits our environment (the process never modifies it after start-up)
  // plus the configured variables.
  std::vector<std::string> env_strings;
  for (char** e = environ; *e != nullptr; ++e)
    env_strings.emplace_back(*e);  // NOLINT(concurrency-mt-unsafe)
  env_strings.insert(env_strings.end(), extra_env.begin(), extra_env.end());
  std::vector<char*> envp;
  envp.reserve(env_strings.size() + 1);
  for (auto& e : env_strings) envp.push_back(e.data());
  envp.push_back(nullptr);
  std::vector<std::string> argv_strings{command};
  argv_strings.insert(argv_strings.end(), args.begin(), args.end());
  std::vector<char*> argv;
  argv.reserve(argv_strings.size() + 1);
  for (auto& a : argv_strings) argv.push_back(a.data());
  argv.push_back(nullptr);

  pid_t pid = 0;
  const int rc = ::posix_spawnp(&pid, command.c_str(), &actions, nullptr, argv.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  ::close(out[1]);
  if (rc != 0) {
    ::close(out[0]);
    return make_error("cannot run " + command + ": " + errno_text(rc));
  }

  std::string output;
  const auto deadline = std::chrono::steady_clock::now() + kExecTimeout;
  bool timed_out = false;
  for (;;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      timed_out = true;
      break;
    }
    pollfd pfd{out[0], POLLIN, 0};
    const int ready = ::poll(&pfd, 1, static_cast<int>(left.count()));
    if (ready < 0 && errno == EINTR) continue;
    if (ready <= 0) {
      timed_out = ready == 0;
      break;
    }
    char buf[4096];
    const ssize_t n = ::read(out[0], buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    output.append(buf, static_cast<std::size_t>(n));
    if (output.size() > kMaxExecOutput) break;
  }
  ::close(out[0]);
  if (timed_out) ::kill(pid, SIGKILL);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (timed_out) {
    return make_error(command + " did not finish within " + std::to_string(kExecTimeout.count()) +
                      " s and was killed");
  }
  if (output.size() > kMaxExecOutput) return make_error(command + " printed too much output");
  if (WIFSIGNALED(status)) {
    return make_error(command + " was killed by signal " + std::to_string(WTERMSIG(status)));
  }
  if (WEXITSTATUS(status) != 0) {
    if (WEXITSTATUS(status) == 127) return make_error("cannot run " + command + ": not found");
    return make_error(command + " exited with status " + std::to_string(WEXITSTATUS(status)));
  }
  return output;
}

class ExecTokenSource final : public TokenSource {
 public:
  ExecTokenSource(ExecConfig config, WallClock wall)
      : config_(std::move(config)),
        wall_(wall ? std::move(wall) : WallClock([] { return std::chrono::system_clock::now(); })) {
  }

  Result<std::string> token() override {
    const std::lock_guard lock(mutex_);
    if (token_ && (!expiry_ || wall_() + kExecExpiryMargin < *expiry_)) return *token_;
    auto credential = run();
    if (!credential) {
      std::string message = config_.origin + ": exec plugin: " + credential.error().message;
      if (!config_.install_hint.empty()) message += " (" + config_.install_hint + ")";
      return make_error(std::move(message));
    }
    return *token_;
  }

 private:
  Result<void> run() {
    const std::string api_version =
        config_.api_version.empty() ? "client.authentication.k8s.io/v1" : config_.api_version;
    std::vector<std::string> env;
    for (const auto& [k, v] : config_.env) {
      std::string entry = k;
      entry += '=';
      entry += v;
      env.push_back(std::move(entry));
    }
    env.push_back("KUBERNETES_EXEC_INFO=" +
                  json::serialize(json::object{{"apiVersion", api_version},
                                               {"kind", "ExecCredential"},
                                               {"spec", {{"interactive", false}}}}));
    auto output = run_command(config_.command, config_.args, env);
    if (!output) return output.error();
    boost::system::error_code ec;
    const json::value v = json::parse(*output, ec);
    if (ec || !v.is_object()) return make_error("output is not an ExecCredential JSON object");
    const auto& o = v.get_object();
    const auto* kind = o.if_contains("kind");
    if (kind == nullptr || !kind->is_string() || kind->get_string() != "ExecCredential") {
      return make_error("output is not an ExecCredential (kind)");
    }
    const auto* status = o.if_contains("status");
    if (status == nullptr || !status->is_object()) {
      return make_error("ExecCredential has no status");
    }
    const auto& st = status->get_object();
    const auto* token = st.if_contains("token");
    if (token == nullptr || !token->is_string() || token->get_string().empty()) {
      if (st.contains("clientCertificateData")) {
        return make_error(
            "ExecCredential returned a client certificate; only token credentials are "
            "supported by this client");
      }
      return make_error("ExecCredential has no status.token");
    }
    std::optional<std::chrono::system_clock::time_point> expiry;
    if (const auto* exp = st.if_contains("expirationTimestamp");
        exp != nullptr && exp->is_string()) {
      expiry = parse_rfc3339(exp->get_string());
      if (!expiry) return make_error("ExecCredential has an invalid status.expirationTimestamp");
    }
    token_ = std::string(token->get_string());
    expiry_ = expiry;
    return {};
  }

  const ExecConfig config_;
  const WallClock wall_;
  std::mutex mutex_;  // owns token_ and expiry_; held while the plugin runs
  std::optional<std::string> token_;
  std::optional<std::chrono::system_clock::time_point> expiry_;
};

// --- kubeconfig parsing and merging ------------------------------------------------

struct Source {
  std::string file;  // for messages ("kubeconfig" when parsed from a string)
  std::string dir;   // resolves relative paths
  json::value doc;
};

struct Entry {
  const json::object* value = nullptr;  // the inner cluster/user/context object
  const Source* source = nullptr;
  std::string field;  // "users[2].user", for messages
};

struct Merged {
  std::map<std::string, Entry> clusters, users, contexts;
  std::string current_context;
  const Source* current_source = nullptr;
};

std::string where(const Source& s) {
  return s.file == "kubeconfig" ? "kubeconfig" : "kubeconfig " + s.file;
}

Result<void> merge(Merged& m, const Source& src) {
  if (src.doc.is_null()) return {};  // an empty file
  if (!src.doc.is_object()) return make_error(where(src) + ": not a YAML mapping");
  const auto& o = src.doc.get_object();
  struct Section {
    const char* list;
    const char* inner;
    std::map<std::string, Entry>* out;
  };
  for (const Section& sec :
       {Section{"clusters", "cluster", &m.clusters}, Section{"users", "user", &m.users},
        Section{"contexts", "context", &m.contexts}}) {
    const auto* list = o.if_contains(sec.list);
    if (list == nullptr || list->is_null()) continue;
    if (!list->is_array()) return make_error(where(src) + ": " + sec.list + ": expected a list");
    std::size_t i = 0;
    for (const auto& item : list->get_array()) {
      const std::string field = std::string(sec.list) + "[" + std::to_string(i++) + "]";
      const auto* io = item.if_object();
      const auto* name = io != nullptr ? io->if_contains("name") : nullptr;
      if (name == nullptr || !name->is_string() || name->get_string().empty()) {
        return make_error(where(src) + ": " + field + ".name: missing");
      }
      const auto* inner = io->if_contains(sec.inner);
      static const json::object kEmpty;
      const json::object* value = &kEmpty;
      if (inner != nullptr && !inner->is_null()) {
        if (!inner->is_object()) {
          return make_error(where(src) + ": " + field + "." + sec.inner + ": expected a mapping");
        }
        value = &inner->get_object();
      }
      // The first file to define a name wins.
      sec.out->emplace(std::string(name->get_string()),
                       Entry{value, &src, field + "." + sec.inner});
    }
  }
  if (m.current_context.empty()) {
    if (const auto* cc = o.if_contains("current-context"); cc != nullptr && cc->is_string()) {
      m.current_context = cc->get_string();
      m.current_source = &src;
    }
  }
  return {};
}

enum class PemKind { certificates, private_key };

Result<void> check_pem(std::string_view pem, PemKind kind) {
  if (kind == PemKind::private_key) return net::check_private_key_pem(pem);
  auto certificates = net::check_certificates_pem(pem);
  if (!certificates) return certificates.error();
  return {};
}

// Accessors that report "<file>: <field>.<key>: ..." errors.
class Fields {
 public:
  explicit Fields(const Entry& e) : e_(e) {}

  std::string at(std::string_view key) const {
    return where(*e_.source) + ": " + e_.field + "." + std::string(key);
  }

  Result<std::string> string(std::string_view key) const {
    const auto* v = e_.value->if_contains(key);
    if (v == nullptr || v->is_null()) return std::string();
    if (!v->is_string()) return make_error(at(key) + ": expected a string");
    return std::string(v->get_string());
  }

  Result<bool> boolean(std::string_view key) const {
    const auto* v = e_.value->if_contains(key);
    if (v == nullptr || v->is_null()) return false;
    if (!v->is_bool()) return make_error(at(key) + ": expected true or false");
    return v->get_bool();
  }

  // PEM from `<key>-data` (base64) or the file named by `<key>`; "" when neither.
  // Content that is not PEM of `kind` is an error naming the field it came from.
  Result<std::string> pem(std::string_view key, PemKind kind) const {
    const std::string data_key = std::string(key) + "-data";
    auto data = string(data_key);
    if (!data) return data.error();
    if (!data->empty()) {
      auto decoded = base64_decode(*data);
      if (!decoded) return make_error(at(data_key) + ": not valid base64");
      if (auto ok = check_pem(*decoded, kind); !ok) {
        return make_error(at(data_key) + ": " + ok.error().message);
      }
      return std::move(*decoded);
    }
    auto file = string(key);
    if (!file) return file.error();
    if (file->empty()) return std::string();
    const std::string path = resolve(e_.source->dir, *file);
    auto content = read_file(path);
    if (!content) return make_error(at(key) + ": " + content.error().message);
    if (auto ok = check_pem(*content, kind); !ok) {
      return make_error(at(key) + ": " + path + ": " + ok.error().message);
    }
    return std::move(*content);
  }

  const json::object& object() const { return *e_.value; }
  const Source& source() const { return *e_.source; }

 private:
  const Entry& e_;
};

Result<std::shared_ptr<TokenSource>> exec_source(const Fields& user, const std::string& user_name) {
  const auto* exec = user.object().if_contains("exec");
  const std::string field = user.at("exec");
  if (!exec->is_object()) return make_error(field + ": expected a mapping");
  const auto& e = exec->get_object();
  ExecConfig config;
  auto str = [&](std::string_view k) -> Result<std::string> {
    const auto* v = e.if_contains(k);
    if (v == nullptr || v->is_null()) return std::string();
    if (!v->is_string()) return make_error(field + "." + std::string(k) + ": expected a string");
    return std::string(v->get_string());
  };
  auto command = str("command");
  if (!command) return command.error();
  if (command->empty()) return make_error(field + ".command: missing");
  // client-go: a relative path with a separator is relative to the kubeconfig file.
  config.command =
      command->find('/') != std::string::npos ? resolve(user.source().dir, *command) : *command;
  auto api_version = str("apiVersion");
  if (!api_version) return api_version.error();
  config.api_version = *api_version;
  if (!config.api_version.empty() && config.api_version != "client.authentication.k8s.io/v1" &&
      config.api_version != "client.authentication.k8s.io/v1beta1") {
    return make_error(field + ".apiVersion: " + config.api_version +
                      " is not supported (use client.authentication.k8s.io/v1)");
  }
  auto hint = str("installHint");
  if (!hint) return hint.error();
  config.install_hint = *hint;
  if (const auto* args = e.if_contains("args"); args != nullptr && !args->is_null()) {
    if (!args->is_array()) return make_error(field + ".args: expected a list");
    for (const auto& a : args->get_array()) {
      if (!a.is_string()) return make_error(field + ".args: expected strings");
      config.args.emplace_back(a.get_string());
    }
  }
  if (const auto* env = e.if_contains("env"); env != nullptr && !env->is_null()) {
    if (!env->is_array()) return make_error(field + ".env: expected a list");
    for (const auto& item : env->get_array()) {
      const auto* io = item.if_object();
      const auto* n = io != nullptr ? io->if_contains("name") : nullptr;
      const auto* v = io != nullptr ? io->if_contains("value") : nullptr;
      if (n == nullptr || !n->is_string() || v == nullptr || !v->is_string()) {
        return make_error(field + ".env: each entry needs a string name and value");
      }
      config.env.emplace_back(std::string(n->get_string()), std::string(v->get_string()));
    }
  }
  config.origin = where(user.source()) + ", user \"" + user_name + "\"";
  return make_exec_token_source(std::move(config));
}

Result<ClientConfig> resolve_context(const Merged& m, std::string_view context_flag,
                                     const std::string& first_file) {
  const std::string files = first_file.empty() ? "kubeconfig" : "kubeconfig " + first_file;
  std::string context_name(context_flag);
  if (context_name.empty()) context_name = m.current_context;
  if (context_name.empty()) {
    return make_error(files +
                      ": no current-context is set; set it (kubectl config use-context) "
                      "or pass --context");
  }
  const auto ctx_it = m.contexts.find(context_name);
  if (ctx_it == m.contexts.end()) {
    return make_error(files + ": context \"" + context_name + "\" not found");
  }
  const Fields ctx(ctx_it->second);
  ClientConfig cfg;
  cfg.source = where(ctx.source()) + " (context " + context_name + ")";

  auto cluster_name = ctx.string("cluster");
  if (!cluster_name) return cluster_name.error();
  if (cluster_name->empty()) return make_error(ctx.at("cluster") + ": missing");
  const auto cl_it = m.clusters.find(*cluster_name);
  if (cl_it == m.clusters.end()) {
    return make_error(ctx.at("cluster") + ": cluster \"" + *cluster_name + "\" not found");
  }
  auto ns = ctx.string("namespace");
  if (!ns) return ns.error();
  cfg.namespace_ = *ns;

  const Fields cluster(cl_it->second);
  auto server = cluster.string("server");
  if (!server) return server.error();
  if (server->empty()) return make_error(cluster.at("server") + ": missing");
  cfg.server = *server;
  if (auto endpoint = net::HttpEndpoint::parse(cfg.server); !endpoint) {
    return make_error(cluster.at("server") + ": " + endpoint.error().message);
  }
  auto ca = cluster.pem("certificate-authority", PemKind::certificates);
  if (!ca) return ca.error();
  cfg.ca_pem = std::move(*ca);
  auto insecure = cluster.boolean("insecure-skip-tls-verify");
  if (!insecure) return insecure.error();
  cfg.insecure_skip_tls_verify = *insecure;
  auto server_name = cluster.string("tls-server-name");
  if (!server_name) return server_name.error();
  cfg.tls_server_name = *server_name;

  auto user_name = ctx.string("user");
  if (!user_name) return user_name.error();
  if (user_name->empty()) return cfg;  // no credentials
  const auto u_it = m.users.find(*user_name);
  if (u_it == m.users.end()) {
    return make_error(ctx.at("user") + ": user \"" + *user_name + "\" not found");
  }
  const Fields user(u_it->second);
  if (user.object().contains("auth-provider")) {
    return make_error(user.at("auth-provider") +
                      ": auth-provider plugins are not supported; use an exec credential plugin");
  }
  auto cert = user.pem("client-certificate", PemKind::certificates);
  if (!cert) return cert.error();
  auto key = user.pem("client-key", PemKind::private_key);
  if (!key) return key.error();
  if (cert->empty() != key->empty()) {
    return make_error(user.at(cert->empty() ? "client-certificate" : "client-key") +
                      ": missing (client-certificate and client-key go together)");
  }
  cfg.client_cert_pem = std::move(*cert);
  cfg.client_key_pem = std::move(*key);

  auto token = user.string("token");
  if (!token) return token.error();
  auto token_file = user.string("tokenFile");
  if (!token_file) return token_file.error();
  if (!token_file->empty()) {
    // The file is the rotating source; read it now so a bad path fails at start-up.
    const std::string path = resolve(user.source().dir, *token_file);
    auto source = make_file_token_source(path);
    if (auto first = source->token(); !first) {
      return make_error(user.at("tokenFile") + ": " + first.error().message);
    }
    cfg.token = std::move(source);
  } else if (!token->empty()) {
    cfg.token = make_static_token_source(*token);
  }
  if (user.object().contains("exec")) {
    if (cfg.token) {
      return make_error(user.at("exec") +
                        ": a user has either a token or an exec plugin, not both");
    }
    auto exec = exec_source(user, *user_name);
    if (!exec) return exec.error();
    cfg.token = std::move(*exec);
  }
  auto username = user.string("username");
  if (!username) return username.error();
  auto password = user.string("password");
  if (!password) return password.error();
  cfg.username = *username;
  cfg.password = *password;
  return cfg;
}

std::vector<std::string> split_path_list(std::string_view list) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (start <= list.size()) {
    const auto colon = list.find(':', start);
    const auto end = colon == std::string_view::npos ? list.size() : colon;
    if (end > start) out.emplace_back(list.substr(start, end - start));
    if (colon == std::string_view::npos) break;
    start = colon + 1;
  }
  return out;
}

}  // namespace

std::shared_ptr<TokenSource> make_static_token_source(std::string token) {
  return std::make_shared<StaticTokenSource>(std::move(token));
}

std::shared_ptr<TokenSource> make_file_token_source(std::string path, const net::Clock& clock) {
  return std::make_shared<FileTokenSource>(std::move(path), clock);
}

std::shared_ptr<TokenSource> make_exec_token_source(ExecConfig config, WallClock wall_clock) {
  return std::make_shared<ExecTokenSource>(std::move(config), std::move(wall_clock));
}

Result<ClientConfig> parse_kubeconfig(std::string_view yaml_text, std::string_view context,
                                      std::string_view base_dir) {
  auto doc = yaml::parse(yaml_text);
  if (!doc) return make_error("kubeconfig: invalid YAML: " + doc.error().message);
  Source src{"kubeconfig", std::string(base_dir), std::move(*doc)};
  Merged m;
  if (auto r = merge(m, src); !r) return r.error();
  return resolve_context(m, context, "");
}

Result<ClientConfig> load_kubeconfig_files(const std::vector<std::string>& paths,
                                           std::string_view context, bool require_all) {
  std::vector<std::unique_ptr<Source>> sources;
  Merged m;
  for (const auto& path : paths) {
    if (!require_all && !file_exists(path)) continue;
    auto content = read_file(path);
    if (!content) return make_error("kubeconfig: " + content.error().message);
    auto doc = yaml::parse(*content);
    if (!doc) return make_error("kubeconfig " + path + ": invalid YAML: " + doc.error().message);
    sources.push_back(std::make_unique<Source>(Source{path, dir_of(path), std::move(*doc)}));
    if (auto r = merge(m, *sources.back()); !r) return r.error();
  }
  if (sources.empty()) {
    std::string list;
    for (const auto& p : paths) list += (list.empty() ? "" : ":") + p;
    return make_error("kubeconfig: none of the files exist: " + list);
  }
  const std::string first = sources.size() == 1 ? sources.front()->file : "files " + [&] {
    std::string l;
    for (const auto& s : sources) l += (l.empty() ? "" : ":") + s->file;
    return l;
  }();
  return resolve_context(m, context, first);
}

Result<ClientConfig> in_cluster_config(const ConfigSelection& selection) {
  if (!selection.service_host || selection.service_host->empty() || !selection.service_port ||
      selection.service_port->empty()) {
    return make_error(
        "in-cluster configuration: KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT are not "
        "set (not running in a pod?)");
  }
  ClientConfig cfg;
  const std::string& host = *selection.service_host;
  cfg.server = "https://" + (host.find(':') != std::string::npos ? "[" + host + "]" : host) + ":" +
               *selection.service_port;
  cfg.source = "in-cluster";
  const std::string dir = selection.service_account_dir;
  auto ca = read_file(dir + "/" + std::string(kServiceAccountCa));
  if (!ca) {
    return make_error("in-cluster configuration: service-account CA: " + ca.error().message);
  }
  if (auto ok = net::check_certificates_pem(*ca); !ok) {
    return make_error("in-cluster configuration: service-account CA " + dir + "/" +
                      std::string(kServiceAccountCa) + ": " + ok.error().message);
  }
  cfg.ca_pem = std::move(*ca);
  auto source = make_file_token_source(dir + "/" + std::string(kServiceAccountToken));
  if (auto first = source->token(); !first) {
    return make_error("in-cluster configuration: service-account token: " + first.error().message);
  }
  cfg.token = std::move(source);
  if (auto ns = read_file(dir + "/" + std::string(kServiceAccountNamespace))) {
    cfg.namespace_ = trim(std::move(*ns));
  }
  return cfg;
}

ConfigSelection selection_from_environment() {
  ConfigSelection s;
  auto env = [](const char* name) -> std::optional<std::string> {
    const char* v = std::getenv(name);  // NOLINT(concurrency-mt-unsafe): read at start-up
    if (v == nullptr) return std::nullopt;
    return std::string(v);
  };
  s.kubeconfig_env = env("KUBECONFIG");
  s.home = env("HOME");
  s.service_host = env("KUBERNETES_SERVICE_HOST");
  s.service_port = env("KUBERNETES_SERVICE_PORT");
  return s;
}

Result<ClientConfig> load_client_config(const ConfigSelection& selection) {
  const std::string context = selection.context.value_or("");
  if (selection.in_cluster.value_or(false)) return in_cluster_config(selection);
  if (selection.kubeconfig_path) {
    return load_kubeconfig_files({*selection.kubeconfig_path}, context, true);
  }
  const bool may_use_in_cluster = selection.in_cluster.value_or(true);
  if (selection.kubeconfig_env && !selection.kubeconfig_env->empty()) {
    const auto paths = split_path_list(*selection.kubeconfig_env);
    bool any = false;
    for (const auto& p : paths) any = any || file_exists(p);
    if (any) return load_kubeconfig_files(paths, context, false);
  } else if (selection.home) {
    const std::string path = *selection.home + "/.kube/config";
    if (file_exists(path)) return load_kubeconfig_files({path}, context, true);
  }
  if (may_use_in_cluster && selection.service_host && selection.service_port) {
    return in_cluster_config(selection);
  }
  std::string tried;
  if (selection.kubeconfig_env && !selection.kubeconfig_env->empty()) {
    tried = "KUBECONFIG=" + *selection.kubeconfig_env + " (no such files)";
  } else if (selection.home) {
    tried = *selection.home + "/.kube/config (no such file)";
  } else {
    tried = "no KUBECONFIG and no HOME";
  }
  return make_error("no Kubernetes configuration found: tried " + tried +
                    ", and not running in a cluster (KUBERNETES_SERVICE_HOST/PORT unset); pass "
                    "--kubeconfig or set KUBECONFIG");
}

}  // namespace aop::k8s
