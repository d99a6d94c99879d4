#include "base/parallel.hpp"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <exception>
#include <string>
#include <thread>
#include <vector>

namespace gpusel {

namespace {

std::atomic<std::size_t> forced_threads{0};

std::size_t default_threads() {
    if (const char* text = std::getenv("GPUSEL_THREADS"); text != nullptr && *text != '\0') {
        char* end = nullptr;
        const unsigned long long value = std::strtoull(text, &end, 10);
        if (end != nullptr && *end == '\0' && value > 0 && value <= 4096) {
            return static_cast<std::size_t>(value);
        }
    }
    return std::max(1U, std::thread::hardware_concurrency());
}

}  // namespace

std::size_t worker_threads() {
    if (const std::size_t forced = forced_threads.load(std::memory_order_relaxed); forced > 0) {
        return forced;
    }
    static const std::size_t threads = default_threads();
    return threads;
}

void set_worker_threads(std::size_t threads) {
    forced_threads.store(threads, std::memory_order_relaxed);
}

void parallel_for(std::size_t items, const std::function<void(std::size_t)>& body, std::size_t max_threads) {
    std::size_t threads = std::min(worker_threads(), items);
    if (max_threads > 0) {
        threads = std::min(threads, max_threads);
    }
    if (threads <= 1) {
        for (std::size_t item = 0; item < items; ++item) {
            body(item);
        }
        return;
    }
    std::atomic<std::size_t> next{0};
    std::atomic<bool> failed{false};
    std::exception_ptr failure;
    const auto worker = [&]() {
        for (std::size_t item = next++; item < items && !failed.load(); item = next++) {
            try {
                body(item);
            } catch (...) {
                if (!failed.exchange(true)) {
                    failure = std::current_exception();
                }
            }
        }
    };
    std::vector<std::thread> pool;
    pool.reserve(threads - 1);
    for (std::size_t thread = 1; thread < threads; ++thread) {
        pool.emplace_back(worker);
    }
    worker();
    for (std::thread& thread : pool) {
        thread.join();
    }
    if (failure) {
        std::rethrow_exception(failure);
    }
}

}  // namespace gpusel
