// The status of one GrafanaAgent after a reconcile, and what the runner does next, as a
// pure function of what happened: the plan (pipeline.hpp), the apply engine's report,
// the state of the root's workloads, and an error reading referenced Secrets.
//
// Status written on the GrafanaAgent (status subresource, only when it changed):
//   conditions        Reconciled (True, or False with a reason and the error) and Ready
//                     (every workload the root should have exists, has rolled out its
//                     latest spec and has its replicas ready)
//                     Backend (True Static/Alloy once no object of the other backend is
//                     left; False Switching while the other backend's objects are kept
//                     until every workload of the effective one is ready) and, on Alloy
//                     only, AlloyTranslation (Complete, CompleteWithWarnings, Incomplete,
//                     Failed; removed on static)
//   observedGeneration, backend (static or alloy)
//   metricsInstances, serviceMonitors, podMonitors, probes, logsInstances, podLogs,
//   integrations      counts of the discovered hierarchy (a monitor selected by two
//                     instances counts twice)
//   problems          [{kind, namespace, name, message, severity, field}] of members that
//                     were left out or look wrong (at most kMaxStatusProblems)
//
// Which error wins when several happened (the first in this order): the root does not
// decode (InvalidSpec, no retry until it changes), reading referenced Secrets failed
// (AssetReadFailed), discovery failed (DiscoveryFailed), a referenced key is missing
// (AssetResolutionFailed), a generated name would be refused (InvalidName, no retry until
// the root changes), a generated object's name is taken by an object the root does not
// own (NotOwned), a write failed (ApplyFailed), a config file failed to render
// (RenderFailed). Every other error is retried with backoff, and at once when something
// the root read changes; a failure of the API server (reading referenced Secrets, or a
// write the server failed: no answer, 429, 5xx, 401/403, persistent conflicts) with the
// shorter backoff cap of API failures, since no event announces the server's recovery.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>

#include <boost/json/value.hpp>

#include "k8s/object.hpp"
#include "reconcile/agent/pipeline.hpp"
#include "reconcile/runtime/apply.hpp"
#include "reconcile/runtime/controller.hpp"
#include "reconcile/runtime/errors.hpp"
#include "reconcile/runtime/status.hpp"

namespace aop::agent {

inline constexpr std::size_t kMaxStatusProblems = 50;

// A workload as last seen: the API server's answer to this reconcile's write of it when
// there was one (fresher than the cache), else the cache.
struct WorkloadState {
  WorkloadRef ref;
  bool exists = false;
  bool apply_failed = false;  // this reconcile's write of it failed
  std::int64_t generation = 0;
  std::optional<std::int64_t> observed_generation;  // status.observedGeneration
  std::int64_t desired = 0;                         // replicas (DaemonSet: pods scheduled)
  std::int64_t ready = 0;
};

// The state of `ref` from its live object (nullptr: it does not exist).
WorkloadState workload_state(const WorkloadRef& ref, const k8s::Object* live);

struct Readiness {
  bool ready = false;
  std::string reason;  // NoWorkloads, WorkloadsReady, WorkloadsNotReady
  std::string message;
};

// Ready when every workload exists, its controller has observed its latest generation
// (status.observedGeneration present and not older than metadata.generation, as
// `kubectl rollout status` requires) and it has all its replicas ready.
Readiness readiness(std::span<const WorkloadState> workloads);

// Where a switch between backends stands, beyond the plan.
struct SwitchProgress {
  // The report of this reconcile's deletion of the other backend's objects (nullptr: it
  // did not run, the effective backend's workloads are not all ready).
  const runtime::ApplyReport* retired = nullptr;
  // How long the switch has waited ("since <time>, <duration>"), when known.
  std::string waited;
  // The Backend condition the root had (reason and message), to tell a switch that
  // starts from one in progress.
  std::string previous_reason;
  std::string previous_message;
};

// A Normal Event on the root.
struct NormalEvent {
  std::string reason;
  std::string message;
};

struct RootStatus {
  runtime::StatusUpdate update;  // conditions and fields to write
  // Steps of a switch between backends: SwitchStarted, SwitchCompleted.
  std::vector<NormalEvent> events;
  // The error the reconcile ends with (also the reason of its Warning Event).
  std::optional<runtime::Failure> error;
  // Discovery succeeded: the plan's problems are the root's current problems.
  bool problems_known = false;
  // What the runner does next (a failed status write aside).
  runtime::ReconcileResult result;
};

// A status.problems entry for each object the apply left alone because it is not the
// root's (ObjectResult::not_owned), appended to plan.problems.
void add_ownership_problems(RootPlan& plan, const runtime::ApplyReport& applied);

// `applied` is nullptr when the plan's steps did not run; `workloads` holds the state of
// every workload of plan.workloads.
RootStatus root_status(const RootPlan& plan, const runtime::ApplyReport* applied,
                       std::span<const WorkloadState> workloads,
                       const std::optional<std::string>& read_error,
                       const SwitchProgress& progress = {});

}  // namespace aop::agent
