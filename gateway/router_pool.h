// Routers for the threads of a server: a router is not thread-safe and keeps a database
// connection, so a worker borrows one for a request and gives it back. A router keeps nothing of
// its callers (each request carries its own), so any idle one serves any connection.
#pragma once

#include <functional>
#include <memory>
#include <mutex>
#include <vector>

#include "domains/router.h"

namespace ct::mcp {

/// Makes a router for one worker; each worker keeps its own database connection.
using RouterFactory = std::function<std::unique_ptr<Router>()>;

class RouterPool {
 public:
  explicit RouterPool(RouterFactory make) : make_(std::move(make)) {}

  /// An idle router, else a new one.
  std::unique_ptr<Router> take() {
    {
      std::lock_guard lock(mutex_);
      if (!idle_.empty()) {
        auto router = std::move(idle_.back());
        idle_.pop_back();
        return router;
      }
    }
    return make_();
  }
  void give_back(std::unique_ptr<Router> router) {
    std::lock_guard lock(mutex_);
    idle_.push_back(std::move(router));
  }
  const RouterFactory& factory() const { return make_; }

 private:
  RouterFactory make_;
  std::mutex mutex_;
  std::vector<std::unique_ptr<Router>> idle_;
};

}  // namespace ct::mcp
