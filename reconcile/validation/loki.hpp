// Rules of the agent's logs subsystem (Promtail/Loki code) and server block for what the
// operator writes into `logs:` and `server:` sections: log level and format, the LogQL
// selector of a match stage, byte sizes, stage-specific settings.
#pragma once

#include <string_view>

#include "reconcile/validation/report.hpp"

namespace aop::validation {

// server.log_level: debug, info, warn or error; server.log_format: logfmt or json. Empty
// is the default.
Complaint check_log_level(std::string_view level);
Complaint check_log_format(std::string_view format);

// A LogQL log selector as the match stage parses it: a stream selector
// `{name op "value", ...}` (ops =, !=, =~, !~; values quoted with " or `; `=~`/`!~`
// values compile as RE2), optionally followed by a pipeline whose line filters
// (|= != |~ !~ with a quoted string) are checked and whose other stages (`| json`, ...)
// must at least be non-empty with balanced quotes.
Complaint check_logql_selector(std::string_view selector);

// A byte size as Loki reads it (humanize.ParseBytes): a number and an optional unit
// (B, kB, KB, KiB, MB, MiB, ... any case), e.g. "1KB", "10 MiB", "1024".
Complaint check_byte_size(std::string_view text);

// Go template text: every `{{` closed by a later `}}`.
Complaint check_template_text(std::string_view text);

}  // namespace aop::validation
