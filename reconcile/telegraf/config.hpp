// The generated telegraf configuration (telegraf.conf).
//
// Every `key = value` line is produced by toml++ (a one-entry table printed with
// toml::toml_formatter), so keys are quoted and strings escaped by the library, never
// by hand: no annotation content can open a table, end a string or add a key. Only the
// fixed table headers and the indentation are written here.
//
// Why line by line rather than one toml::table printed at once: toml++ keeps a
// table's keys in a std::map, so its formatter prints them sorted (`[agent]` before
// `[global_tags]`, `collection_jitter` before `interval`), not in the order the spec
// lays out. Printing each pair through the library keeps the spec's table order, key
// order and two-space indentation. What still comes from the library's own layout:
// arrays print with inner spaces (`urls = [ "http://…" ]`), and strings are basic
// (double-quoted) strings with every non-ASCII character escaped (`\u00E9`), so the
// file is plain ASCII. Same inputs, same bytes.
#pragma once

#include <span>
#include <string>
#include <string_view>

#include "reconcile/telegraf/annotation.hpp"
#include "reconcile/telegraf/options.hpp"

namespace aop::telegraf {

// The InfluxDB bucket of an application: its name with `-` replaced by `_` (the
// convention of the job that creates one bucket per application).
std::string bucket_name(std::string_view application);

// The whole telegraf.conf for one target namespace: [global_tags], [agent], one
// [[inputs.prometheus]] per endpoint in the given order, one [[outputs.influxdb_v2]].
// The token is never written, only the ${INFLUX_TOKEN} reference.
std::string render_telegraf_config(std::string_view application,
                                   std::span<const Endpoint> endpoints,
                                   const TelegrafOptions& options);

}  // namespace aop::telegraf
