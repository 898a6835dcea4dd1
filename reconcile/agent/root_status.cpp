#include "reconcile/agent/root_status.hpp"

#include <algorithm>

#include <boost/json.hpp>

namespace aop::agent {

namespace json = boost::json;

namespace {

// An object of the root is being deleted (to be recreated): look again after this.
constexpr auto kWaitingRecheck = std::chrono::seconds(1);
// Workloads named in the Ready condition's message.
constexpr std::size_t kWorkloadsInMessage = 5;

std::optional<std::int64_t> int_at(const k8s::Object& o,
                                   std::initializer_list<std::string_view> path) {
  const auto v = o.at(path);
  if (!v || !v->is_number()) return std::nullopt;
  return v->to_number<std::int64_t>();
}

// Why a workload is not ready, or nullopt when it is.
std::optional<std::string> not_ready(const WorkloadState& w) {
  if (!w.exists) {
    return w.apply_failed ? std::string("does not exist (its apply failed)")
                          : std::string("does not exist yet");
  }
  if (!w.observed_generation) {
    return "generation " + std::to_string(w.generation) + " not rolled out yet (not observed)";
  }
  if (*w.observed_generation < w.generation) {
    return "generation " + std::to_string(w.generation) + " not rolled out yet (observed " +
           std::to_string(*w.observed_generation) + ")";
  }
  if (w.ready < w.desired) {
    return std::to_string(w.ready) + "/" + std::to_string(w.desired) + " ready";
  }
  return std::nullopt;
}

json::array problems_json(const std::vector<Problem>& problems) {
  json::array out;
  for (const auto& p : problems) {
    if (out.size() >= kMaxStatusProblems) break;
    json::object e{{"kind", p.kind.kind},
                   {"namespace", p.object.ns},
                   {"name", p.object.name},
                   {"message", p.message},
                   {"severity", runtime::severity_name(p.severity)}};
    if (!p.field.empty()) e["field"] = p.field;
    out.push_back(std::move(e));
  }
  return out;
}

// The error the reconcile ends with, in the precedence of root_status.hpp.
std::optional<runtime::Failure> first_error(const RootPlan& plan,
                                            const runtime::ApplyReport* applied,
                                            const std::optional<std::string>& read_error) {
  using runtime::Errc;
  if (plan.failure && plan.failure->stage == Stage::decode) {
    return runtime::Failure{plan.failure->code, plan.failure->message};
  }
  if (read_error) return runtime::Failure{Errc::asset_read_failed, *read_error};
  if (plan.failure && plan.failure->stage != Stage::assemble &&
      plan.failure->stage != Stage::translate) {
    return runtime::Failure{plan.failure->code, plan.failure->message};
  }
  if (applied != nullptr) {
    for (const auto& o : applied->objects) {
      if (o.result == runtime::ObjectResult::not_owned) {
        return runtime::Failure{Errc::not_owned, o.error};
      }
    }
  }
  if (applied != nullptr && !applied->errors.empty()) {
    return runtime::Failure{Errc::apply_failed, applied->errors.front()};
  }
  if (plan.failure) return runtime::Failure{plan.failure->code, plan.failure->message};
  return std::nullopt;
}

// status.backend, the Backend condition, and the Events of a switch between backends.
void backend_status(const RootPlan& plan, std::span<const WorkloadState> workloads,
                    const SwitchProgress& progress, RootStatus& out) {
  const Backend effective = plan.backend->backend;
  const Backend old = plan.old_objects.backend;
  const std::string e(backend_name(effective));
  const std::string o(backend_name(old));
  const std::int64_t generation = plan.generation;
  auto& su = out.update;
  su.fields["backend"] = e;
  if (effective != Backend::alloy) su.removed_conditions.emplace_back("AlloyTranslation");
  const std::size_t ready = static_cast<std::size_t>(std::count_if(
      workloads.begin(), workloads.end(), [](const WorkloadState& w) { return !not_ready(w); }));
  const std::string n = std::to_string(workloads.size());
  const bool retired = progress.retired != nullptr && progress.retired->ok();
  if (plan.old_objects.empty() || retired) {
    su.conditions.push_back({"Backend", "True", effective == Backend::alloy ? "Alloy" : "Static",
                             effective == Backend::alloy
                                 ? "deployed with Grafana Alloy"
                                 : "deployed with Grafana Agent in static mode",
                             generation});
    if (retired && progress.retired->deleted > 0) {
      out.events.push_back({"SwitchCompleted", o + " → " + e + ": all " + n + " " + e +
                                                   " workload(s) ready; deleted " +
                                                   std::to_string(progress.retired->deleted) + " " +
                                                   o + " object(s)"});
    }
    return;
  }
  const std::string direction = o + " → " + e + ":";
  std::string message =
      plan.failure ? direction + " the " + e +
                         " objects were not all applied (see the Reconciled condition); " + o +
                         " objects are kept until they are and all are ready"
                   : direction + " " + std::to_string(ready) + " of " + n + " " + e +
                         " workload(s) ready; " + o + " objects are kept until all are ready";
  if (!progress.waited.empty()) message += "; waiting " + progress.waited;
  su.conditions.push_back({"Backend", "False", "Switching", std::move(message), generation});
  if (progress.previous_reason != "Switching" ||
      !progress.previous_message.starts_with(direction)) {
    out.events.push_back({"SwitchStarted", "switching from " + o + " to " + e + ": the " + e +
                                               " objects are created next to the " + o +
                                               " ones, which are kept until every " + e +
                                               " workload is ready"});
  }
}

}  // namespace

void add_ownership_problems(RootPlan& plan, const runtime::ApplyReport& applied) {
  for (const auto& o : applied.objects) {
    if (o.result != runtime::ObjectResult::not_owned) continue;
    Problem p;
    p.kind = {o.kind.group, "v1", o.kind.kind};
    for (const auto& step : plan.apply.steps) {
      if (runtime::GroupKind::of(step.kind) == o.kind && step.key == o.key) p.kind = step.kind;
    }
    p.object = o.key;
    p.field = "metadata.ownerReferences";
    // The outcome's error starts with "<Kind> <namespace/name>: ", which the entry names.
    const std::string prefix = o.kind.kind + " " + o.key.str() + ": ";
    p.message = o.error.starts_with(prefix) ? o.error.substr(prefix.size()) : o.error;
    plan.problems.push_back(std::move(p));
  }
}

WorkloadState workload_state(const WorkloadRef& ref, const k8s::Object* live) {
  WorkloadState w;
  w.ref = ref;
  if (live == nullptr) return w;
  w.exists = true;
  w.generation = live->generation();
  w.observed_generation = int_at(*live, {"status", "observedGeneration"});
  if (ref.kind == Kind::daemon_set) {
    w.desired = int_at(*live, {"status", "desiredNumberScheduled"}).value_or(0);
    w.ready = int_at(*live, {"status", "numberReady"}).value_or(0);
  } else {
    w.desired = int_at(*live, {"spec", "replicas"}).value_or(1);
    w.ready = int_at(*live, {"status", "readyReplicas"}).value_or(0);
  }
  return w;
}

Readiness readiness(std::span<const WorkloadState> workloads) {
  if (workloads.empty()) {
    return {true, "NoWorkloads",
            "no workload to run: no MetricsInstance, LogsInstance or Integration is selected"};
  }
  std::size_t ready = 0;
  std::vector<std::string> waiting;
  for (const auto& w : workloads) {
    if (auto why = not_ready(w)) {
      waiting.push_back(std::string(kind_name(w.ref.kind)) + " " + w.ref.key.str() + ": " + *why);
    } else {
      ++ready;
    }
  }
  const std::size_t total = workloads.size();
  if (ready == total) {
    return {true, "WorkloadsReady",
            "all " + std::to_string(total) + " workload(s) have their replicas ready"};
  }
  std::string message =
      std::to_string(ready) + " of " + std::to_string(total) + " workload(s) ready";
  for (std::size_t i = 0; i < waiting.size() && i < kWorkloadsInMessage; ++i) {
    message += "; " + waiting[i];
  }
  if (waiting.size() > kWorkloadsInMessage) {
    message += "; and " + std::to_string(waiting.size() - kWorkloadsInMessage) + " more";
  }
  return {false, "WorkloadsNotReady", message};
}

RootStatus root_status(const RootPlan& plan, const runtime::ApplyReport* applied,
                       std::span<const WorkloadState> workloads,
                       const std::optional<std::string>& read_error,
                       const SwitchProgress& progress) {
  RootStatus out;
  const std::int64_t generation = plan.generation;
  auto& su = out.update;
  su.fields["observedGeneration"] = generation;

  out.error = first_error(plan, applied, read_error);
  if (plan.paused && !out.error) {
    su.conditions.push_back({"Reconciled", "False", "Paused",
                             "spec.paused is true: the operator creates, updates and deletes "
                             "nothing for this agent until it is unpaused",
                             generation});
    out.result = runtime::ReconcileResult::ok();
    return out;
  }

  if (out.error) {
    su.conditions.push_back({"Reconciled", "False", std::string(runtime::reason(out.error->code)),
                             out.error->message, generation});
  } else {
    std::string message = "applied " + std::to_string(plan.apply.steps.size()) + " steps";
    if (!plan.problems.empty()) {
      message += "; " + std::to_string(plan.problems.size()) +
                 " member(s) skipped or suspect (see status.problems and Events)";
    }
    su.conditions.push_back({"Reconciled", "True", "Reconciled", message, generation});
  }
  // Readiness is known whenever the steps ran: every workload the root should have
  // counts, also one this reconcile failed to write or did not reach.
  if (applied != nullptr && !read_error) {
    const Readiness r = readiness(workloads);
    su.conditions.push_back({"Ready", r.ready ? "True" : "False", r.reason, r.message, generation});
  }
  if (plan.backend) backend_status(plan, workloads, progress, out);
  if (plan.alloy_translation) {
    const auto& [status, reason, message] = *plan.alloy_translation;
    su.conditions.push_back({"AlloyTranslation", status, reason, message, generation});
  }
  // Problems are known once the validate stage ran (also when it refused the root
  // before anything was discovered); the counts once a hierarchy was discovered.
  if (plan.summary || (plan.failure && plan.failure->stage == Stage::validate)) {
    out.problems_known = true;
    su.fields["problems"] = problems_json(plan.problems);
  }
  if (plan.summary) {
    const HierarchySummary& s = *plan.summary;
    su.fields["metricsInstances"] = s.metrics_instances;
    su.fields["serviceMonitors"] = s.service_monitors;
    su.fields["podMonitors"] = s.pod_monitors;
    su.fields["probes"] = s.probes;
    su.fields["logsInstances"] = s.logs_instances;
    su.fields["podLogs"] = s.pod_logs;
    su.fields["integrations"] = s.integrations;
  }

  if (out.error) {
    // A root that does not decode, or whose generated names would be refused, changes
    // only by an edit (of the root or of the operator's flags), and that is an event.
    // A failure of the API server is retried with the shorter cap: nothing else would
    // tell the root that the server is back.
    const runtime::Errc code = out.error->code;
    if (code == runtime::Errc::invalid_spec || code == runtime::Errc::invalid_name ||
        code == runtime::Errc::invalid_backend || code == runtime::Errc::translation_failed) {
      out.result = runtime::ReconcileResult::terminal_error(out.error->message);
    } else if (code == runtime::Errc::asset_read_failed ||
               (code == runtime::Errc::apply_failed && applied != nullptr &&
                applied->server_failure)) {
      out.result = runtime::ReconcileResult::api_failed(out.error->message);
    } else {
      out.result = runtime::ReconcileResult::failed(out.error->message);
    }
  } else if (applied != nullptr && applied->waiting) {
    out.result = runtime::ReconcileResult::requeue(kWaitingRecheck);
  } else {
    out.result = runtime::ReconcileResult::ok();
  }
  return out;
}

}  // namespace aop::agent
