#include <catch2/catch.hpp>

#include <atomic>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "base/parallel.hpp"
#include "cli/cli.hpp"
#include "support/test_support.hpp"

namespace {

// Restores the default thread count when a test ends, however it ends.
struct ThreadCount {
    explicit ThreadCount(std::size_t threads) { gpusel::set_worker_threads(threads); }
    ~ThreadCount() { gpusel::set_worker_threads(0); }
    ThreadCount(const ThreadCount&) = delete;
    ThreadCount& operator=(const ThreadCount&) = delete;
};

std::string plan_output(const std::string& example, const std::string& format) {
    std::ostringstream out;
    std::ostringstream err;
    const int code =
        gpusel::cli::run({"plan", "--format", format, gpusel::test::source_path("examples/" + example)}, out, err);
    REQUIRE(code == 0);
    return out.str();
}

}  // namespace

TEST_CASE("parallel: set_worker_threads overrides the thread count, 0 restores it", "[parallel]") {
    const std::size_t usual = gpusel::worker_threads();
    CHECK(usual >= 1);
    {
        const ThreadCount three(3);
        CHECK(gpusel::worker_threads() == 3);
    }
    CHECK(gpusel::worker_threads() == usual);
}

TEST_CASE("parallel: every item runs exactly once, whatever the thread count", "[parallel]") {
    for (const std::size_t threads : {1U, 2U, 4U, 16U}) {
        INFO(threads);
        const ThreadCount count(threads);
        for (const std::size_t items : {0U, 1U, 2U, 3U, 97U}) {
            INFO(items);
            std::vector<std::atomic<int>> runs(items);
            gpusel::parallel_for(items, [&](std::size_t item) { ++runs[item]; });
            for (std::size_t item = 0; item < items; ++item) {
                CHECK(runs[item].load() == 1);
            }
        }
    }
}

TEST_CASE("parallel: one thread runs the items inline, in index order", "[parallel]") {
    const ThreadCount count(4);
    std::vector<std::size_t> order;
    std::vector<std::thread::id> where;
    // max_threads 1: the calling thread alone, so pushing without a lock is safe.
    gpusel::parallel_for(
        5,
        [&](std::size_t item) {
            order.push_back(item);
            where.push_back(std::this_thread::get_id());
        },
        1);
    CHECK(order == std::vector<std::size_t>{0, 1, 2, 3, 4});
    for (const std::thread::id id : where) {
        CHECK(id == std::this_thread::get_id());
    }
}

TEST_CASE("parallel: an item's exception reaches the caller after every thread stops", "[parallel]") {
    const ThreadCount count(2);
    std::atomic<int> finished{0};
    CHECK_THROWS_WITH(gpusel::parallel_for(8,
                                           [&](std::size_t item) {
                                               if (item == 3) {
                                                   throw std::runtime_error("item 3");
                                               }
                                               ++finished;
                                           }),
                      "item 3");
    // Items after the failure may be skipped; never more than the seven that do not throw.
    CHECK(finished.load() <= 7);
    // The threads are kept for the next section, which runs whole.
    std::vector<std::atomic<int>> runs(20);
    gpusel::parallel_for(runs.size(), [&](std::size_t item) { ++runs[item]; });
    for (const std::atomic<int>& run : runs) {
        CHECK(run.load() == 1);
    }
}

TEST_CASE("parallel: a section inside a section runs, inline", "[parallel]") {
    const ThreadCount count(2);
    std::vector<std::atomic<int>> runs(6 * 5);
    gpusel::parallel_for(
        6, [&](std::size_t outer) { gpusel::parallel_for(5, [&](std::size_t inner) { ++runs[outer * 5 + inner]; }); });
    for (const std::atomic<int>& run : runs) {
        CHECK(run.load() == 1);
    }
}

// The planner's parallel sections (GPU types, robustness members, Monte Carlo blocks,
// break-evens) merge their results in a fixed order: one thread and two give the same plan,
// byte for byte. A serving example (capacity searches, the SLO break-even's shared latency
// cache) and a training one (the per-GPU training search and pricing).
TEST_CASE("parallel: the plan is the same with one thread and with two", "[parallel][plan]") {
    for (const char* example : {"chat-llama2-13b-int4.yaml", "vit-base-training.yaml"}) {
        INFO(example);
        std::string serial_text;
        std::string serial_json;
        {
            const ThreadCount one(1);
            serial_text = plan_output(example, "table");
            serial_json = plan_output(example, "json");
        }
        const ThreadCount two(2);
        CHECK(plan_output(example, "table") == serial_text);
        CHECK(plan_output(example, "json") == serial_json);
        CHECK(serial_json.find("\"p_feasible\"") != std::string::npos);  // the analysis ran
    }
}
