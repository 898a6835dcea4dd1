// agent_operator_roots{controller="grafana-agent",ready}: how many managed GrafanaAgents
// have Ready True, False or Unknown (no condition yet), counted from the informer cache
// every few seconds, so that an alert can fire on roots that stay not ready; and
// agent_operator_agent_roots{backend}: how many are on each backend (status.backend).
#pragma once

#include <atomic>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>

#include "k8s/informer_factory.hpp"
#include "net/clock.hpp"

namespace aop::app {

struct Options;

// Counts until `stopped`; reads the GrafanaAgent cache the agent controller uses (the same
// CacheSpec yields the same shared cache, so this opens no watch of its own).
boost::asio::awaitable<void> count_root_readiness(k8s::InformerFactory& informers,
                                                  const Options& options, net::Duration period,
                                                  const std::atomic<bool>& stopped);

}  // namespace aop::app
