#pragma once
// Independent work items over the machine's cores, with results that do not depend on the
// scheduling: each item writes only its own slot, and the caller reads the slots in index order.

#include <cstddef>
#include <functional>

namespace gpusel {

// Threads a parallel section may use, the calling thread included: the last
// set_worker_threads(n > 0), else the environment variable GPUSEL_THREADS when it holds a
// positive whole number (1: everything on the calling thread), else the hardware's threads
// (at least 1).
std::size_t worker_threads();
// Overrides worker_threads() for the whole process (tests compare 1 thread with 2); 0 restores
// the default.
void set_worker_threads(std::size_t threads);

// Runs body(i) once for each i in [0, items), on up to min(worker_threads(), max_threads, items)
// threads, the calling one included (max_threads 0: no further limit); inline, in index order,
// when that is one thread. Items are handed out one at a time in index order. body must touch
// only what no other item touches (or guard it). The first exception an item throws is
// rethrown here once every thread has stopped; items not yet started are then skipped.
void parallel_for(std::size_t items, const std::function<void(std::size_t)>& body, std::size_t max_threads = 0);

}  // namespace gpusel
