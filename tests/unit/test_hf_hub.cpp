#include <catch2/catch.hpp>

#include <map>
#include <string>

#include "inputs/hf_hub.hpp"

namespace {

gpusel::HfHubSettings settings_for(const std::map<std::string, std::string>& environment) {
    return gpusel::hf_hub_settings(
        [&](const char* name) -> const char* {
            const auto found = environment.find(name);
            return found == environment.end() ? nullptr : found->second.c_str();
        },
        false);
}

}  // namespace

TEST_CASE("hf_hub: the cache folder follows HF_HUB_CACHE, HF_HOME, then ~/.cache", "[hf]") {
    CHECK(settings_for({{"HOME", "/h"}}).cache_dir == "/h/.cache/huggingface/hub");
    CHECK(settings_for({{"HOME", "/h"}, {"HF_HOME", "/hf"}}).cache_dir == "/hf/hub");
    CHECK(settings_for({{"HOME", "/h"}, {"HF_HOME", "/hf"}, {"HF_HUB_CACHE", "/c"}}).cache_dir == "/c");
    CHECK(settings_for({{"HOME", "/h"}}).endpoint == "https://huggingface.co");
    CHECK(settings_for({{"HF_ENDPOINT", "http://127.0.0.1:9/"}}).endpoint == "http://127.0.0.1:9");
    CHECK(settings_for({{"HF_HUB_OFFLINE", "1"}}).offline);
    CHECK_FALSE(settings_for({{"HF_HUB_OFFLINE", "0"}}).offline);
    CHECK(settings_for({{"HF_HUB_DOWNLOAD_TIMEOUT", "3"}}).timeout_s == 3);
    CHECK(settings_for({{"HF_HUB_DOWNLOAD_TIMEOUT", "x"}}).timeout_s == 10);
    CHECK(settings_for({{"HF_TOKEN", "hf_abc\n"}}).token == "hf_abc");
}

TEST_CASE("hf_hub: ids", "[hf]") {
    CHECK(gpusel::check_hf_repo_id("meta-llama/Llama-3.1-8B-Instruct").empty());
    CHECK(gpusel::check_hf_repo_id("gpt2").empty());
    CHECK_FALSE(gpusel::check_hf_repo_id("a/b/c").empty());
    CHECK_FALSE(gpusel::check_hf_repo_id("a--b/c").empty());
    CHECK_FALSE(gpusel::check_hf_repo_id("../x").empty());
    CHECK(gpusel::looks_like_hf_repo_id("Qwen/Qwen2.5-72B-Instruct-AWQ"));
    CHECK_FALSE(gpusel::looks_like_hf_repo_id("llama-3.1-8b"));
}
