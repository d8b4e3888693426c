#include "core/progress.h"

#include <utility>

namespace ct {
namespace {

thread_local ProgressScope* innermost = nullptr;

}  // namespace

ProgressScope::ProgressScope(ProgressSink sink) : sink_(std::move(sink)), outer_(innermost) { innermost = this; }

ProgressScope::~ProgressScope() { innermost = outer_; }

void report_progress(std::string_view message) {
  for (ProgressScope* scope = innermost; scope; scope = scope->outer_)
    if (scope->sink_) scope->sink_(message);
}

}  // namespace ct
