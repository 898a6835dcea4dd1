#include "tools/kube-sim/table.hpp"

#include <cstdio>
#include <ctime>

#include <boost/json.hpp>

namespace aop::sim {

namespace json = boost::json;

std::string human_duration(std::chrono::seconds d) {
  const long long seconds = d.count();
  char buf[32];
  if (seconds < -1) return "<invalid>";
  if (seconds < 0) return "0s";
  if (seconds < 120) {
    std::snprintf(buf, sizeof buf, "%llds", seconds);
    return buf;
  }
  const long long minutes = seconds / 60;
  if (minutes < 10) {
    const long long s = seconds % 60;
    if (s == 0)
      std::snprintf(buf, sizeof buf, "%lldm", minutes);
    else
      std::snprintf(buf, sizeof buf, "%lldm%llds", minutes, s);
    return buf;
  }
  if (minutes < 180) {
    std::snprintf(buf, sizeof buf, "%lldm", minutes);
    return buf;
  }
  const long long hours = seconds / 3600;
  if (hours < 8) {
    const long long m = minutes % 60;
    if (m == 0)
      std::snprintf(buf, sizeof buf, "%lldh", hours);
    else
      std::snprintf(buf, sizeof buf, "%lldh%lldm", hours, m);
    return buf;
  }
  if (hours < 48) {
    std::snprintf(buf, sizeof buf, "%lldh", hours);
    return buf;
  }
  if (hours < 24LL * 8) {
    const long long h = hours % 24;
    if (h == 0)
      std::snprintf(buf, sizeof buf, "%lldd", hours / 24);
    else
      std::snprintf(buf, sizeof buf, "%lldd%lldh", hours / 24, h);
    return buf;
  }
  if (hours < 24LL * 365 * 2) {
    std::snprintf(buf, sizeof buf, "%lldd", hours / 24);
    return buf;
  }
  if (hours < 24LL * 365 * 8) {
    const long long dy = (hours / 24) % 365;
    if (dy == 0)
      std::snprintf(buf, sizeof buf, "%lldy", hours / 24 / 365);
    else
      std::snprintf(buf, sizeof buf, "%lldy%lldd", hours / 24 / 365, dy);
    return buf;
  }
  std::snprintf(buf, sizeof buf, "%lldy", hours / 24 / 365);
  return buf;
}

namespace {

std::optional<std::chrono::system_clock::time_point> parse_time(std::string_view s) {
  std::tm tm{};
  int y = 0, mo = 0, d = 0, h = 0, mi = 0, sec = 0;
  if (std::sscanf(std::string(s).c_str(), "%d-%d-%dT%d:%d:%d", &y, &mo, &d, &h, &mi, &sec) != 6) {
    return std::nullopt;
  }
  tm.tm_year = y - 1900;
  tm.tm_mon = mo - 1;
  tm.tm_mday = d;
  tm.tm_hour = h;
  tm.tm_min = mi;
  tm.tm_sec = sec;
  return std::chrono::system_clock::from_time_t(timegm(&tm));
}

const json::value* at_path(const json::object& o, std::initializer_list<std::string_view> path) {
  const json::value* cur = nullptr;
  const json::object* scope = &o;
  for (auto p : path) {
    if (scope == nullptr) return nullptr;
    cur = scope->if_contains(p);
    if (cur == nullptr) return nullptr;
    scope = cur->is_object() ? &cur->as_object() : nullptr;
  }
  return cur;
}

std::int64_t int_at(const json::object& o, std::initializer_list<std::string_view> path) {
  const auto* v = at_path(o, path);
  return v != nullptr && v->is_number() ? v->to_number<std::int64_t>() : 0;
}

std::string str_at(const json::object& o, std::initializer_list<std::string_view> path) {
  const auto* v = at_path(o, path);
  return v != nullptr && v->is_string() ? std::string(v->as_string()) : std::string();
}

std::string value_text(const json::value& v) {
  if (v.is_string()) return std::string(v.as_string());
  return json::serialize(v);
}

// JSONPath evaluation over a small grammar: .field, ['field'], [n], [*], [?(@.a.b=="v")].
void eval(const json::value& cur, std::string_view path, std::vector<json::value>& out) {
  if (path.empty()) {
    out.push_back(cur);
    return;
  }
  if (path.front() == '.') {
    path.remove_prefix(1);
    if (path.empty()) {
      out.push_back(cur);
      return;
    }
    if (path.front() == '[') {
      eval(cur, path, out);
      return;
    }
    std::size_t end = path.find_first_of(".[");
    const std::string_view field = path.substr(0, end);
    const std::string_view rest =
        end == std::string_view::npos ? std::string_view() : path.substr(end);
    if (field == "*") {
      if (cur.is_object()) {
        for (const auto& [k, v] : cur.as_object()) eval(v, rest, out);
      } else if (cur.is_array()) {
        for (const auto& v : cur.as_array()) eval(v, rest, out);
      }
      return;
    }
    if (!cur.is_object()) return;
    const auto* next = cur.as_object().if_contains(field);
    if (next != nullptr) eval(*next, rest, out);
    return;
  }
  if (path.front() == '[') {
    const std::size_t close = path.find(']');
    if (close == std::string_view::npos) return;
    std::string_view inner = path.substr(1, close - 1);
    const std::string_view rest = path.substr(close + 1);
    if (inner == "*") {
      if (cur.is_array()) {
        for (const auto& v : cur.as_array()) eval(v, rest, out);
      }
      return;
    }
    if (inner.starts_with("?(@.") && inner.ends_with(")")) {
      // ?(@.key=="value") / ?(@.key=='value')
      const std::string_view cond = inner.substr(4, inner.size() - 5);
      const std::size_t eq = cond.find("==");
      if (eq == std::string_view::npos || !cur.is_array()) return;
      const std::string key(cond.substr(0, eq));
      std::string_view want = cond.substr(eq + 2);
      if (want.size() >= 2 && (want.front() == '"' || want.front() == '\''))
        want = want.substr(1, want.size() - 2);
      for (const auto& item : cur.as_array()) {
        std::vector<json::value> got;
        eval(item, "." + key, got);
        if (!got.empty() && value_text(got.front()) == want) eval(item, rest, out);
      }
      return;
    }
    if (inner.size() >= 2 && (inner.front() == '\'' || inner.front() == '"')) {
      const std::string_view field = inner.substr(1, inner.size() - 2);
      if (!cur.is_object()) return;
      const auto* next = cur.as_object().if_contains(field);
      if (next != nullptr) eval(*next, rest, out);
      return;
    }
    if (!cur.is_array()) return;
    try {
      long long idx = std::stoll(std::string(inner));
      const auto n = static_cast<long long>(cur.as_array().size());
      if (idx < 0) idx += n;
      if (idx >= 0 && idx < n) eval(cur.as_array()[static_cast<std::size_t>(idx)], rest, out);
    } catch (const std::exception&) {
    }
  }
}

}  // namespace

std::vector<json::value> eval_json_path(const json::value& root, std::string_view path) {
  std::vector<json::value> out;
  while (!path.empty() && path.front() == ' ') path.remove_prefix(1);
  if (path.starts_with("{") && path.ends_with("}")) path = path.substr(1, path.size() - 2);
  if (path.starts_with("$")) path.remove_prefix(1);
  if (!path.empty() && path.front() != '.' && path.front() != '[') {
    eval(root, "." + std::string(path), out);
  } else {
    eval(root, path, out);
  }
  return out;
}

TablePrinter::TablePrinter(const ResourceType& type, std::chrono::system_clock::time_point now,
                           TableObjects include)
    : api_version_("meta.k8s.io/v1"), now_(now), include_(include) {
  const std::string name_desc =
      "Name must be unique within a namespace. Is required when creating resources, although some "
      "resources may allow a client to request the generation of an appropriate name "
      "automatically. Name is primarily intended for creation idempotence and configuration "
      "definition. Cannot be updated. More info: "
      "https://kubernetes.io/docs/concepts/overview/working-with-objects/names#names";
  const std::string age_desc =
      "CreationTimestamp is a timestamp representing the server time when this object was created.";
  auto builtin = [&](std::string name, std::string id, std::string type = "string",
                     int priority = 0) {
    Column c;
    c.name = std::move(name);
    c.type = std::move(type);
    c.builtin = std::move(id);
    c.priority = priority;
    columns_.push_back(std::move(c));
  };
  Column name_col;
  name_col.name = "Name";
  name_col.type = "string";
  name_col.format = "name";
  name_col.description = name_desc;
  name_col.builtin = "name";
  columns_.push_back(name_col);
  const std::string& kind = type.kind;
  if (!type.builtin) {
    if (type.printer_columns.is_array() && !type.printer_columns.as_array().empty()) {
      for (const auto& pc : type.printer_columns.as_array()) {
        if (!pc.is_object()) continue;
        const auto& o = pc.as_object();
        Column c;
        c.name = o.contains("name") && o.at("name").is_string()
                     ? std::string(o.at("name").as_string())
                     : "";
        c.type = o.contains("type") && o.at("type").is_string()
                     ? std::string(o.at("type").as_string())
                     : "string";
        c.format = o.contains("format") && o.at("format").is_string()
                       ? std::string(o.at("format").as_string())
                       : "";
        c.description = o.contains("description") && o.at("description").is_string()
                            ? std::string(o.at("description").as_string())
                            : "Custom resource definition column (in JSONPath format): " +
                                  (o.contains("jsonPath") ? value_text(o.at("jsonPath")) : "");
        c.priority = o.contains("priority") && o.at("priority").is_number()
                         ? o.at("priority").to_number<int>()
                         : 0;
        c.json_path = o.contains("jsonPath") && o.at("jsonPath").is_string()
                          ? std::string(o.at("jsonPath").as_string())
                          : "";
        columns_.push_back(std::move(c));
      }
      return;
    }
    Column age;
    age.name = "Age";
    age.type = "date";
    age.description = age_desc;
    age.json_path = ".metadata.creationTimestamp";
    columns_.push_back(std::move(age));
    return;
  }
  if (kind == "Pod") {
    builtin("Ready", "pod_ready");
    builtin("Status", "pod_status");
    builtin("Restarts", "pod_restarts");
  } else if (kind == "Deployment") {
    builtin("Ready", "ready_of_replicas");
    builtin("Up-to-date", "updated", "integer");
    builtin("Available", "available", "integer");
  } else if (kind == "StatefulSet") {
    builtin("Ready", "ready_of_replicas");
  } else if (kind == "DaemonSet") {
    builtin("Desired", "ds_desired", "integer");
    builtin("Current", "ds_current", "integer");
    builtin("Ready", "ds_ready", "integer");
    builtin("Up-to-date", "ds_updated", "integer");
    builtin("Available", "ds_available", "integer");
  } else if (kind == "Service") {
    builtin("Type", "svc_type");
    builtin("Cluster-IP", "svc_cluster_ip");
    builtin("External-IP", "svc_external_ip");
    builtin("Port(s)", "svc_ports");
  } else if (kind == "Secret") {
    builtin("Type", "secret_type");
    builtin("Data", "data_count", "integer");
  } else if (kind == "ConfigMap") {
    builtin("Data", "data_count", "integer");
  } else if (kind == "Namespace") {
    builtin("Status", "ns_status");
  } else if (kind == "Lease") {
    builtin("Holder", "lease_holder");
  } else if (kind == "CustomResourceDefinition") {
    Column created;
    created.name = "Created At";
    created.type = "date";
    created.builtin = "created_at";
    columns_.push_back(std::move(created));
    return;
  }
  Column age;
  age.name = "Age";
  age.type = "string";
  age.description = age_desc;
  age.builtin = "age";
  columns_.push_back(std::move(age));
}

json::array TablePrinter::column_definitions() const {
  json::array out;
  for (const auto& c : columns_) {
    out.push_back(json::object{{"name", c.name},
                               {"type", c.type == "date" ? "date" : c.type},
                               {"format", c.format},
                               {"description", c.description},
                               {"priority", c.priority}});
  }
  return out;
}

json::value TablePrinter::cell(const Column& c, const json::object& obj) const {
  auto since = [&](std::string_view ts) -> json::value {
    auto t = parse_time(ts);
    if (!t) return nullptr;
    return json::value(human_duration(std::chrono::duration_cast<std::chrono::seconds>(now_ - *t)));
  };
  if (!c.json_path.empty()) {
    auto results = eval_json_path(obj, c.json_path);
    if (results.empty()) return nullptr;
    if (results.size() > 1) {
      std::string joined;
      for (std::size_t i = 0; i < results.size(); ++i)
        joined += (i ? " " : "") + value_text(results[i]);
      return json::value(joined);
    }
    const auto& v = results.front();
    if (c.type == "date") return v.is_string() ? since(v.as_string()) : json::value(nullptr);
    if (c.type == "integer")
      return v.is_number() ? json::value(v.to_number<std::int64_t>()) : json::value(nullptr);
    if (c.type == "number")
      return v.is_number() ? json::value(v.to_number<double>()) : json::value(nullptr);
    if (c.type == "boolean") return v.is_bool() ? v : json::value(nullptr);
    if (v.is_string()) return v;
    return json::value(json::serialize(v));
  }
  const std::string& id = c.builtin;
  if (id == "name") return json::value(str_at(obj, {"metadata", "name"}));
  if (id == "age") return since(str_at(obj, {"metadata", "creationTimestamp"}));
  if (id == "created_at") return json::value(str_at(obj, {"metadata", "creationTimestamp"}));
  if (id == "ready_of_replicas") {
    return json::value(std::to_string(int_at(obj, {"status", "readyReplicas"})) + "/" +
                       std::to_string(int_at(obj, {"spec", "replicas"})));
  }
  if (id == "updated") return int_at(obj, {"status", "updatedReplicas"});
  if (id == "available") return int_at(obj, {"status", "availableReplicas"});
  if (id == "ds_desired") return int_at(obj, {"status", "desiredNumberScheduled"});
  if (id == "ds_current") return int_at(obj, {"status", "currentNumberScheduled"});
  if (id == "ds_ready") return int_at(obj, {"status", "numberReady"});
  if (id == "ds_updated") return int_at(obj, {"status", "updatedNumberScheduled"});
  if (id == "ds_available") return int_at(obj, {"status", "numberAvailable"});
  if (id == "pod_ready" || id == "pod_restarts") {
    std::int64_t total = 0;
    std::int64_t ready = 0;
    std::int64_t restarts = 0;
    if (const auto* cs = at_path(obj, {"spec", "containers"}); cs != nullptr && cs->is_array()) {
      total = static_cast<std::int64_t>(cs->as_array().size());
    }
    if (const auto* st = at_path(obj, {"status", "containerStatuses"});
        st != nullptr && st->is_array()) {
      for (const auto& s : st->as_array()) {
        if (!s.is_object()) continue;
        const auto* r = s.as_object().if_contains("ready");
        if (r != nullptr && r->is_bool() && r->as_bool()) ++ready;
        const auto* rc = s.as_object().if_contains("restartCount");
        if (rc != nullptr && rc->is_number()) restarts += rc->to_number<std::int64_t>();
      }
    }
    if (id == "pod_ready") return json::value(std::to_string(ready) + "/" + std::to_string(total));
    return json::value(std::to_string(restarts));
  }
  if (id == "pod_status") {
    if (const auto* dt = at_path(obj, {"metadata", "deletionTimestamp"});
        dt != nullptr && !dt->is_null()) {
      return json::value("Terminating");
    }
    const auto phase = str_at(obj, {"status", "phase"});
    return json::value(phase.empty() ? "Unknown" : phase);
  }
  if (id == "svc_type") return json::value(str_at(obj, {"spec", "type"}));
  if (id == "svc_cluster_ip") {
    const auto ip = str_at(obj, {"spec", "clusterIP"});
    return json::value(ip.empty() ? "<none>" : ip);
  }
  if (id == "svc_external_ip") return json::value("<none>");
  if (id == "svc_ports") {
    std::string out;
    if (const auto* ports = at_path(obj, {"spec", "ports"});
        ports != nullptr && ports->is_array()) {
      for (const auto& p : ports->as_array()) {
        if (!p.is_object()) continue;
        if (!out.empty()) out += ",";
        const auto& po = p.as_object();
        out += std::to_string(po.contains("port") && po.at("port").is_number()
                                  ? po.at("port").to_number<std::int64_t>()
                                  : 0);
        if (const auto* np = po.if_contains("nodePort"); np != nullptr && np->is_number()) {
          out += ":" + std::to_string(np->to_number<std::int64_t>());
        }
        const auto* proto = po.if_contains("protocol");
        out += "/" + (proto != nullptr && proto->is_string() ? std::string(proto->as_string())
                                                             : std::string("TCP"));
      }
    }
    return json::value(out.empty() ? "<none>" : out);
  }
  if (id == "secret_type") return json::value(str_at(obj, {"type"}));
  if (id == "data_count") {
    std::int64_t n = 0;
    for (const char* f : {"data", "binaryData"}) {
      if (const auto* d = obj.if_contains(f); d != nullptr && d->is_object())
        n += static_cast<std::int64_t>(d->as_object().size());
    }
    return n;
  }
  if (id == "ns_status") return json::value(str_at(obj, {"status", "phase"}));
  if (id == "lease_holder") return json::value(str_at(obj, {"spec", "holderIdentity"}));
  return nullptr;
}

json::object TablePrinter::row(const StoredObject& o) const {
  const json::object obj = o.parse();
  json::array cells;
  for (const auto& c : columns_) cells.push_back(cell(c, obj));
  json::object r{{"cells", std::move(cells)}};
  if (include_ == TableObjects::metadata) {
    r["object"] = json::parse(render_partial_metadata(o));
  } else if (include_ == TableObjects::object) {
    r["object"] = obj;
  }
  return r;
}

std::string TablePrinter::render_one(const StoredObject& o, json::object metadata) const {
  json::object t{{"kind", "Table"},
                 {"apiVersion", api_version_},
                 {"metadata", std::move(metadata)},
                 {"columnDefinitions", column_definitions()},
                 {"rows", json::array{row(o)}}};
  return json::serialize(t);
}

std::string TablePrinter::render(const std::vector<ObjectPtr>& objects,
                                 json::object metadata) const {
  json::array rows;
  for (const auto& o : objects) rows.push_back(row(*o));
  json::object t{{"kind", "Table"},
                 {"apiVersion", api_version_},
                 {"metadata", std::move(metadata)},
                 {"columnDefinitions", column_definitions()},
                 {"rows", std::move(rows)}};
  return json::serialize(t);
}

}  // namespace aop::sim
