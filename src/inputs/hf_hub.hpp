#pragma once
// Hugging Face model ids (ORG/NAME): the local cache in huggingface_hub's layout, and a download
// of config.json from the Hub (libcurl) when the cache lacks it, stored so both tools share it.
//
// Cache layout (huggingface_hub file_download.py): <cache>/models--ORG--NAME/refs/<branch> holds
// a commit hash; snapshots/<commit>/config.json is a relative link to ../../blobs/<etag>.

#include <filesystem>
#include <functional>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>

#include "inputs/models.hpp"

namespace gpusel {

struct HfHubSettings {
    std::filesystem::path cache_dir;                  // $HF_HUB_CACHE, else $HF_HOME/hub, else ~/.cache/huggingface/hub
    std::string endpoint = "https://huggingface.co";  // $HF_ENDPOINT
    std::string token;     // $HF_TOKEN, else the token file ($HF_TOKEN_PATH, else $HF_HOME/token)
    bool offline = false;  // HF_HUB_OFFLINE=1 (or true/yes/on), or --offline
    long timeout_s = 10;   // $HF_HUB_DOWNLOAD_TIMEOUT, as huggingface_hub (default 10 s)
};

// Settings from an environment lookup (nullptr for unset), so tests need no real environment.
using EnvironmentLookup = std::function<const char*(const char*)>;
HfHubSettings hf_hub_settings(const EnvironmentLookup& environment, bool offline_flag);
HfHubSettings hf_hub_settings_from_environment(bool offline_flag);

// Empty when `id` is a Hub model id (NAME or ORG/NAME of letters, digits, '-', '_', '.'; no
// "--" or ".." which the cache folder name cannot tell apart), else what is wrong with it.
std::string check_hf_repo_id(std::string_view id);

// True when `text` looks like an id rather than a preset name: it has exactly one '/'.
bool looks_like_hf_repo_id(std::string_view text);

struct HfSnapshot {
    std::string repo_id;
    std::string revision;  // the commit hash of the snapshot
    std::filesystem::path config_file;
    bool downloaded = false;
};

// Failure to resolve an id: not cached while offline, HTTP errors, timeouts. The message is
// complete (names the id and what to do).
class HfHubError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

// The snapshot of `revision` (a branch or tag in refs/, or a commit hash) in the cache, if it
// holds config.json; no network.
std::optional<HfSnapshot> find_cached_snapshot(const std::filesystem::path& cache_dir, std::string_view repo_id,
                                               std::string_view revision);

// GET <endpoint>/<repo_id>/resolve/<revision>/config.json (redirects followed, at most 5, http and
// https only; the token sent as a Bearer header), stored into the cache. Throws HfHubError.
HfSnapshot download_hf_config(const HfHubSettings& settings, std::string_view repo_id, std::string_view revision);

// The cache first, then (unless offline) a download. Throws HfHubError.
HfSnapshot resolve_hf_snapshot(const HfHubSettings& settings, std::string_view repo_id, std::string_view revision);

// The model of a snapshot: config.json, and the weight format of its quantization_config or of
// quant_config.json / hf_quant_config.json beside it; hf_id and revision set. Throws InputError.
ModelSpec model_from_hf_snapshot(const HfSnapshot& snapshot);

}  // namespace gpusel
