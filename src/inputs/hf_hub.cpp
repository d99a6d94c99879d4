// Hugging Face Hub resolution: cache lookup and config.json download (hf_hub.hpp).

#include "inputs/hf_hub.hpp"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <fstream>
#include <mutex>
#include <sstream>
#include <system_error>

#include <curl/curl.h>
#include <fmt/format.h>

#include "base/text.hpp"
#include "io/yaml.hpp"

namespace gpusel {

namespace fs = std::filesystem;

namespace {

bool env_true(const char* value) {
    if (value == nullptr) {
        return false;
    }
    const std::string lower = to_lower(value);
    return lower == "1" || lower == "true" || lower == "yes" || lower == "on";
}

std::string trim(std::string text) {
    while (!text.empty() && (text.back() == '\n' || text.back() == '\r' || text.back() == ' ' || text.back() == '\t')) {
        text.pop_back();
    }
    std::size_t start = 0;
    while (start < text.size() && (text[start] == ' ' || text[start] == '\t')) {
        ++start;
    }
    return text.substr(start);
}

std::optional<std::string> read_small_file(const fs::path& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) {
        return std::nullopt;
    }
    std::string text(4096, '\0');
    in.read(text.data(), static_cast<std::streamsize>(text.size()));
    text.resize(static_cast<std::size_t>(in.gcount()));
    return text;
}

fs::path repo_folder(const fs::path& cache_dir, std::string_view repo_id) {
    // models--ORG--NAME (huggingface_hub repo_folder_name: "/" becomes "--").
    std::string name = "models--";
    for (const char c : repo_id) {
        name += c == '/' ? std::string("--") : std::string(1, c);
    }
    return cache_dir / name;
}

bool is_commit_hash(std::string_view text) {
    return text.size() == 40 && text.find_first_not_of("0123456789abcdef") == std::string_view::npos;
}

// Writes `text` to `path` through a temporary file and a rename, so that a concurrent reader
// (another gpusel, huggingface_hub) never sees half a file.
void write_atomically(const fs::path& path, std::string_view text) {
    fs::create_directories(path.parent_path());
    const fs::path temporary = path.string() + ".gpusel-incomplete";
    {
        std::ofstream out(temporary, std::ios::binary | std::ios::trunc);
        out.write(text.data(), static_cast<std::streamsize>(text.size()));
        if (!out) {
            throw HfHubError(fmt::format("cannot write {} into the Hugging Face cache", temporary.string()));
        }
    }
    fs::rename(temporary, path);
}

struct Response {
    long status = 0;
    std::string body;
    std::string commit;  // X-Repo-Commit, from whichever response of a redirect chain had it
    std::string etag;    // X-Linked-Etag, else the final response's ETag
    std::string linked_etag;
    bool too_large = false;
};

constexpr std::size_t max_config_bytes = 1u << 20;  // the config.json reader's limit too

std::size_t on_body(char* data, std::size_t size, std::size_t count, void* user) {
    auto& response = *static_cast<Response*>(user);
    const std::size_t bytes = size * count;
    if (response.body.size() + bytes > max_config_bytes) {
        response.too_large = true;
        return 0;  // aborts the transfer (CURLE_WRITE_ERROR)
    }
    response.body.append(data, bytes);
    return bytes;
}

std::size_t on_header(char* data, std::size_t size, std::size_t count, void* user) {
    auto& response = *static_cast<Response*>(user);
    const std::string line(data, size * count);
    const std::size_t colon = line.find(':');
    if (line.rfind("HTTP/", 0) == 0) {
        response.etag.clear();  // a new response of the redirect chain
    } else if (colon != std::string::npos) {
        const std::string name = to_lower(line.substr(0, colon));
        std::string value = trim(line.substr(colon + 1));
        if (name == "x-repo-commit") {
            response.commit = value;
        } else if (name == "x-linked-etag") {
            response.linked_etag = value;
        } else if (name == "etag") {
            response.etag = value;
        }
    }
    return size * count;
}

std::string blob_name(std::string etag) {
    // huggingface_hub strips the weak marker and the quotes of the ETag.
    if (etag.rfind("W/", 0) == 0) {
        etag = etag.substr(2);
    }
    std::string name;
    for (const char c : etag) {
        if (std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '-' || c == '_') {
            name += c;
        }
    }
    return name;
}

std::string http_error_message(long status, std::string_view repo_id, std::string_view revision,
                               const HfHubSettings& settings) {
    const std::string page = fmt::format("{}/{}", settings.endpoint, repo_id);
    switch (status) {
        case 401:
            return settings.token.empty()
                       ? fmt::format(
                             "{}: the Hub answered 401: the model is gated or private, or does not exist; "
                             "request access at {} and set HF_TOKEN (or run `huggingface-cli login`)",
                             repo_id, page)
                       : fmt::format("{}: the Hub refused the token (401): check HF_TOKEN or the cached token",
                                     repo_id);
        case 403:
            return fmt::format(
                "{}: the Hub answered 403: this token has no access to the gated model; request it at {}", repo_id,
                page);
        case 404:
            return fmt::format(
                "{}: the Hub has no config.json for this model at revision '{}' (404); check the id at {}", repo_id,
                revision, page);
        default:
            return fmt::format("{}: the Hub answered HTTP {} for config.json", repo_id, status);
    }
}

Response fetch(const std::string& url, const HfHubSettings& settings, std::string_view repo_id) {
    static std::once_flag initialised;
    std::call_once(initialised, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
    CURL* curl = curl_easy_init();
    if (curl == nullptr) {
        throw HfHubError("cannot start libcurl");
    }
    Response response;
    curl_slist* headers = nullptr;
    if (!settings.token.empty()) {
        // libcurl does not send a custom Authorization header to another host after a redirect.
        headers = curl_slist_append(headers, ("Authorization: Bearer " + settings.token).c_str());
    }
    curl_easy_setopt(curl, CURLOPT_URL, url.c_str());
    curl_easy_setopt(curl, CURLOPT_HTTPHEADER, headers);
    curl_easy_setopt(curl, CURLOPT_USERAGENT, "gpusel/" GPUSEL_VERSION);
    curl_easy_setopt(curl, CURLOPT_FOLLOWLOCATION, 1L);
    curl_easy_setopt(curl, CURLOPT_MAXREDIRS, 5L);
    curl_easy_setopt(curl, CURLOPT_PROTOCOLS_STR, "http,https");
    curl_easy_setopt(curl, CURLOPT_REDIR_PROTOCOLS_STR, "http,https");
    curl_easy_setopt(curl, CURLOPT_CONNECTTIMEOUT, settings.timeout_s);
    curl_easy_setopt(curl, CURLOPT_TIMEOUT, settings.timeout_s);
    curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(curl, CURLOPT_WRITEDATA, &response);
    curl_easy_setopt(curl, CURLOPT_HEADERFUNCTION, on_header);
    curl_easy_setopt(curl, CURLOPT_HEADERDATA, &response);
    const CURLcode code = curl_easy_perform(curl);
    curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &response.status);
    curl_easy_cleanup(curl);
    curl_slist_free_all(headers);
    if (code == CURLE_OK) {
        return response;
    }
    std::string why = curl_easy_strerror(code);
    if (code == CURLE_OPERATION_TIMEDOUT) {
        why = fmt::format("no complete answer within {} s (HF_HUB_DOWNLOAD_TIMEOUT)", settings.timeout_s);
    } else if (code == CURLE_PARTIAL_FILE) {
        why = "the answer was cut short (truncated)";
    } else if (code == CURLE_TOO_MANY_REDIRECTS) {
        why = "more than 5 redirects";
    } else if (response.too_large) {
        why = "config.json is larger than 1 MiB";
    }
    throw HfHubError(
        fmt::format("{}: cannot download config.json from {}: {}; set HF_HUB_OFFLINE=1 (or --offline) "
                    "to use only the local cache",
                    repo_id, settings.endpoint, why));
}

}  // namespace

HfHubSettings hf_hub_settings(const EnvironmentLookup& environment, bool offline_flag) {
    HfHubSettings settings;
    const auto get = [&](const char* name) -> std::string {
        const char* value = environment(name);
        return value != nullptr ? std::string(value) : std::string();
    };
    const std::string home = get("HOME");
    const fs::path hf_home = !get("HF_HOME").empty()          ? fs::path(get("HF_HOME"))
                             : !get("XDG_CACHE_HOME").empty() ? fs::path(get("XDG_CACHE_HOME")) / "huggingface"
                                                              : fs::path(home) / ".cache" / "huggingface";
    settings.cache_dir = !get("HF_HUB_CACHE").empty() ? fs::path(get("HF_HUB_CACHE")) : hf_home / "hub";
    if (!get("HF_ENDPOINT").empty()) {
        settings.endpoint = get("HF_ENDPOINT");
        while (!settings.endpoint.empty() && settings.endpoint.back() == '/') {
            settings.endpoint.pop_back();
        }
    }
    settings.token = trim(get("HF_TOKEN"));
    if (settings.token.empty()) {
        const fs::path token_file = !get("HF_TOKEN_PATH").empty() ? fs::path(get("HF_TOKEN_PATH")) : hf_home / "token";
        settings.token = trim(read_small_file(token_file).value_or(""));
    }
    settings.offline = offline_flag || env_true(environment("HF_HUB_OFFLINE"));
    const std::string timeout = get("HF_HUB_DOWNLOAD_TIMEOUT");
    if (!timeout.empty()) {
        char* end = nullptr;
        const long value = std::strtol(timeout.c_str(), &end, 10);
        if (end != nullptr && *end == '\0' && value > 0 && value <= 3600) {
            settings.timeout_s = value;
        }
    }
    return settings;
}

HfHubSettings hf_hub_settings_from_environment(bool offline_flag) {
    return hf_hub_settings([](const char* name) { return std::getenv(name); }, offline_flag);
}

bool looks_like_hf_repo_id(std::string_view text) {
    return std::count(text.begin(), text.end(), '/') == 1 && text.front() != '/' && text.back() != '/' &&
           text.find(".json") == std::string_view::npos;
}

std::string check_hf_repo_id(std::string_view id) {
    if (id.empty() || id.size() > 96 * 2 + 1) {
        return "a Hugging Face id is ORG/NAME, at most 96 characters each";
    }
    const std::size_t slash = id.find('/');
    if (slash != std::string_view::npos &&
        (slash == 0 || slash + 1 == id.size() || id.find('/', slash + 1) != id.npos)) {
        return "a Hugging Face id is ORG/NAME with one '/'";
    }
    for (const char c : id) {
        if (std::isalnum(static_cast<unsigned char>(c)) == 0 && c != '-' && c != '_' && c != '.' && c != '/') {
            return fmt::format("'{}' may not appear in a Hugging Face id (letters, digits, '-', '_', '.')", c);
        }
    }
    if (id.find("--") != id.npos || id.find("..") != id.npos || id.front() == '.' || id.front() == '-') {
        return "a Hugging Face id may not contain '--' or '..' nor start with '-' or '.'";
    }
    return {};
}

std::optional<HfSnapshot> find_cached_snapshot(const fs::path& cache_dir, std::string_view repo_id,
                                               std::string_view revision) {
    const fs::path repo = repo_folder(cache_dir, repo_id);
    std::string commit(revision);
    if (const std::optional<std::string> ref = read_small_file(repo / "refs" / std::string(revision))) {
        commit = trim(*ref);
    }
    if (commit.empty() || commit.find('/') != std::string::npos || commit == "." || commit == "..") {
        return std::nullopt;
    }
    const fs::path config = repo / "snapshots" / commit / "config.json";
    std::error_code error;
    if (!fs::is_regular_file(config, error)) {  // follows the link into blobs/
        return std::nullopt;
    }
    return HfSnapshot{std::string(repo_id), commit, config, false};
}

HfSnapshot download_hf_config(const HfHubSettings& settings, std::string_view repo_id, std::string_view revision) {
    const std::string url = fmt::format("{}/{}/resolve/{}/config.json", settings.endpoint, repo_id, revision);
    Response response = fetch(url, settings, repo_id);
    if (response.status != 200) {
        throw HfHubError(http_error_message(response.status, repo_id, revision, settings));
    }
    if (!is_commit_hash(response.commit)) {
        throw HfHubError(
            fmt::format("{}: {} answered without an X-Repo-Commit header, so the file cannot be stored "
                        "as huggingface_hub stores it; is HF_ENDPOINT a Hugging Face Hub?",
                        repo_id, settings.endpoint));
    }
    const std::string etag = blob_name(!response.linked_etag.empty() ? response.linked_etag : response.etag);
    const fs::path repo = repo_folder(settings.cache_dir, repo_id);
    const fs::path snapshot = repo / "snapshots" / response.commit / "config.json";
    try {
        if (!etag.empty()) {
            write_atomically(repo / "blobs" / etag, response.body);
            fs::create_directories(snapshot.parent_path());
            std::error_code ignored;
            fs::remove(snapshot, ignored);
            fs::create_symlink(fs::path("..") / ".." / "blobs" / etag, snapshot);
        } else {
            write_atomically(snapshot, response.body);
        }
        if (std::string(revision) != response.commit) {
            write_atomically(repo / "refs" / std::string(revision), response.commit);
        }
    } catch (const fs::filesystem_error& error) {
        throw HfHubError(fmt::format("{}: cannot store config.json in the Hugging Face cache {}: {}", repo_id,
                                     settings.cache_dir.string(), error.code().message()));
    }
    return HfSnapshot{std::string(repo_id), response.commit, snapshot, true};
}

HfSnapshot resolve_hf_snapshot(const HfHubSettings& settings, std::string_view repo_id, std::string_view revision) {
    if (const std::string problem = check_hf_repo_id(repo_id); !problem.empty()) {
        throw HfHubError(fmt::format("'{}': {}", repo_id, problem));
    }
    if (revision.empty() || revision.find("..") != revision.npos || revision.find('/') != revision.npos) {
        throw HfHubError(
            fmt::format("'{}' is not a revision gpusel can look up (a branch, tag or commit hash)", revision));
    }
    if (std::optional<HfSnapshot> cached = find_cached_snapshot(settings.cache_dir, repo_id, revision)) {
        return *cached;
    }
    if (settings.offline) {
        throw HfHubError(
            fmt::format("{}: not in the Hugging Face cache {} (revision '{}'), and offline "
                        "(HF_HUB_OFFLINE or --offline); run `huggingface-cli download {} config.json` "
                        "where the Hub is reachable",
                        repo_id, settings.cache_dir.string(), revision, repo_id));
    }
    return download_hf_config(settings, repo_id, revision);
}

ModelSpec model_from_hf_snapshot(const HfSnapshot& snapshot) {
    ModelSpec model = model_from_hf_config_file(snapshot.config_file.string());
    model.name = snapshot.repo_id;
    model.hf_id = snapshot.repo_id;
    model.revision = snapshot.revision;
    if (model.checkpoint_weights.empty()) {
        // AutoAWQ writes quant_config.json; NVIDIA ModelOpt hf_quant_config.json.
        for (const char* name : {"quant_config.json", "hf_quant_config.json"}) {
            const fs::path file = snapshot.config_file.parent_path() / name;
            std::error_code error;
            if (fs::is_regular_file(file, error)) {
                const CheckpointQuantization read =
                    quantization_from_config_text(read_input_file(file.string(), 1u << 20));
                if (!read.weights.empty() || !read.description.empty()) {
                    model.checkpoint_weights = read.weights;
                    model.quantization = read.description + " (" + name + ")";
                    break;
                }
            }
        }
    }
    return model;
}

}  // namespace gpusel
