#include "base/parallel.hpp"

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <cstdlib>
#include <exception>
#include <mutex>
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

// Helper threads started once and kept (a thread's start costs tens of microseconds, as much
// as a small plan's whole parallel section), woken for each parallel_for. One section at a time:
// a section started while another runs (a nested one, or another thread's) runs inline.
class Pool {
public:
    static Pool& instance() {
        static Pool pool;
        return pool;
    }
    Pool() = default;
    Pool(const Pool&) = delete;
    Pool& operator=(const Pool&) = delete;
    ~Pool() {
        {
            const std::lock_guard<std::mutex> lock(m_mutex);
            m_stop = true;
        }
        m_wake.notify_all();
        for (std::thread& thread : m_threads) {
            thread.join();
        }
    }

    // Runs every item on the calling thread and up to `helpers` pool threads; false (nothing
    // run) when the pool is busy.
    bool run(std::size_t items, const std::function<void(std::size_t)>& body, std::size_t helpers) {
        if (m_busy.exchange(true)) {
            return false;
        }
        {
            const std::lock_guard<std::mutex> lock(m_mutex);
            while (m_threads.size() < helpers) {
                m_threads.emplace_back([this]() { help(); });
            }
            m_body = &body;
            m_items = items;
            m_next = 0;
            m_failed = false;
            m_failure = nullptr;
            m_helpers_wanted = helpers;
            m_helpers_joined = 0;
            ++m_generation;
        }
        m_wake.notify_all();
        work();
        {
            // Helpers that wake from now on find the section closed.
            std::unique_lock<std::mutex> lock(m_mutex);
            m_helpers_wanted = 0;
            m_idle.wait(lock, [this]() { return m_helpers_running == 0; });
            m_body = nullptr;
        }
        m_busy = false;
        if (m_failure) {
            std::rethrow_exception(m_failure);
        }
        return true;
    }

private:
    void work() {
        for (std::size_t item = m_next++; item < m_items && !m_failed.load(); item = m_next++) {
            try {
                (*m_body)(item);
            } catch (...) {
                if (!m_failed.exchange(true)) {
                    m_failure = std::current_exception();
                }
            }
        }
    }

    void help() {
        std::uint64_t seen = 0;
        std::unique_lock<std::mutex> lock(m_mutex);
        while (true) {
            m_wake.wait(lock, [&]() { return m_stop || m_generation != seen; });
            if (m_stop) {
                return;
            }
            seen = m_generation;
            if (m_helpers_joined >= m_helpers_wanted) {
                continue;
            }
            ++m_helpers_joined;
            ++m_helpers_running;
            lock.unlock();
            work();
            lock.lock();
            if (--m_helpers_running == 0) {
                m_idle.notify_all();
            }
        }
    }

    std::atomic<bool> m_busy{false};  // a section is running
    std::mutex m_mutex;
    std::condition_variable m_wake;
    std::condition_variable m_idle;
    std::vector<std::thread> m_threads;
    bool m_stop = false;
    std::uint64_t m_generation = 0;
    // The section running (written under m_mutex before helpers are woken).
    const std::function<void(std::size_t)>* m_body = nullptr;
    std::size_t m_items = 0;
    std::size_t m_helpers_wanted = 0;
    std::size_t m_helpers_joined = 0;
    std::size_t m_helpers_running = 0;
    std::atomic<std::size_t> m_next{0};
    std::atomic<bool> m_failed{false};
    std::exception_ptr m_failure;
};

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
    if (threads <= 1 || !Pool::instance().run(items, body, threads - 1)) {
        for (std::size_t item = 0; item < items; ++item) {
            body(item);
        }
    }
}

}  // namespace gpusel
