// Host-side errors. braid reports bad input at plan time with a message naming the offending
// stage / tile / dependency, and reports device-side sync failures (bounded-spin timeouts) the same way.
#pragma once
#include <stdexcept>
#include <string>

namespace braid {

// Invalid plan, spec or arguments, detected on the host before anything runs.
struct PlanError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// A device-side synchronization failure: a bounded wait gave up (stage, tile, semaphore in the text).
struct SyncError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

#define BRAID_REQUIRE(cond, msg)                                   \
  do {                                                             \
    if (!(cond)) throw ::braid::PlanError(std::string(msg));       \
  } while (0)

}  // namespace braid
