// A task to insert straight into a store, for the store tests.
#pragma once

#include <cstdint>
#include <string>
#include <utility>

#include "engines/store/task.h"

namespace ct::test {

/// Task `id` with `title` at `position`, made and changed at a fixed time.
inline Task make_task(std::string id, std::string title, std::int64_t position = 1) {
  Task task;
  task.id = std::move(id);
  task.title = std::move(title);
  task.position = position;
  task.created_at = 1'700'000'000'000;
  task.updated_at = 1'700'000'000'000;
  return task;
}

}  // namespace ct::test
