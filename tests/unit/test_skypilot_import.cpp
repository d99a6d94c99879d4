// The SkyPilot vms.csv importer (include/gpusel/skypilot_import.hpp) and its CSV reader
// (include/gpusel/csv_reader.hpp). Fixtures: tests/data/skypilot/ (synthetic rows in the real
// column orders of each cloud; prices are the providers' published figures quoted in docs/reference/offers.md).

#include <sys/stat.h>
#include <unistd.h>
#include <utime.h>

#include <catch2/catch.hpp>

#include <fmt/format.h>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "catalog/skypilot_import.hpp"
#include "cli/cli.hpp"
#include "io/csv_reader.hpp"
#include "io/yaml.hpp"
#include "support/test_support.hpp"

using gpusel::test::input_errors;

namespace {

std::string fixture(const std::string& relative) {
    return gpusel::test::source_path("tests/data/skypilot/" + relative);
}

std::string read_text(const std::string& path) {
    std::ifstream file(path, std::ios::binary);
    std::ostringstream text;
    text << file.rdbuf();
    return text.str();
}

gpusel::SkypilotImportOptions options_for(const std::string& provider, const std::string& version = "v8") {
    gpusel::SkypilotImportOptions options;
    options.provider = provider;
    options.cloud = provider;
    options.schema_version = version;
    options.as_of = "2026-11";
    options.imported_on = "2026-12-01";
    options.source_path = "vms.csv";
    return options;
}

gpusel::SkypilotImportResult import_fixture(const std::string& relative, const std::string& provider,
                                            const std::string& version = "v8") {
    return gpusel::import_skypilot_csv(read_text(fixture(relative)), relative, options_for(provider, version),
                                       gpusel::test::catalog());
}

gpusel::SkypilotImportResult import_text(const std::string& text, const std::string& provider) {
    return gpusel::import_skypilot_csv(text, "vms.csv", options_for(provider), gpusel::test::catalog());
}

const gpusel::ImportedOffer& offer(const gpusel::SkypilotImportResult& result, const std::string& id) {
    for (const gpusel::ImportedOffer& candidate : result.offers) {
        if (candidate.id == id) {
            return candidate;
        }
    }
    FAIL("no offer " << id);
    throw std::logic_error("unreachable");
}

std::vector<std::string> offer_ids(const gpusel::SkypilotImportResult& result) {
    std::vector<std::string> ids;
    for (const gpusel::ImportedOffer& candidate : result.offers) {
        ids.push_back(candidate.id);
    }
    return ids;
}

std::vector<std::string> skip_lines(const gpusel::SkypilotImportResult& result) {
    std::vector<std::string> lines;
    for (const gpusel::SkippedRow& row : result.skipped) {
        lines.push_back(std::to_string(row.position.line) + ":" + std::to_string(row.position.column) + " " +
                        row.column + ": " + row.reason);
    }
    return lines;
}

std::vector<std::string> warning_texts(const gpusel::SkypilotImportResult& result) {
    std::vector<std::string> texts;
    for (const gpusel::ImportWarning& warning : result.warnings) {
        texts.push_back(std::to_string(warning.line) + " " + warning.offer_id + ": " + warning.message);
    }
    return texts;
}

constexpr const char* aws_header =
    "InstanceType,AcceleratorName,AcceleratorCount,vCPUs,MemoryGiB,GpuInfo,Price,SpotPrice,Region,AvailabilityZone,"
    "Arch\n";

}  // namespace

// ---------------------------------------------------------------------------------------------
// CSV reader

TEST_CASE("csv reader: quoted fields keep commas, doubled quotes and line breaks — positions are exact",
          "[skypilot][csv]") {
    const std::string text =
        "\xEF\xBB\xBF"
        "a,b,c\r\n"
        "1,\"{'x': 1, 'y': 2}\",\"say \"\"hi\"\"\"\r\n"
        "\n"
        ",\"two\nlines\",\n"
        "last,,row";
    const auto records = gpusel::parse_csv_records(text, "t.csv");
    REQUIRE(records.size() == 4);
    CHECK(records[0].fields[0].text == "a");
    CHECK(records[0].fields[0].position.column == 1);  // the BOM is no column
    CHECK(records[1].line == 2);
    CHECK(records[1].fields[1].text == "{'x': 1, 'y': 2}");
    CHECK(records[1].fields[1].position.column == 3);
    CHECK(records[1].fields[2].text == "say \"hi\"");
    CHECK(records[1].fields[2].position.column == 22);
    CHECK(records[2].line == 4);  // the empty line 3 is no record
    CHECK(records[2].fields[0].text.empty());
    CHECK(records[2].fields[1].text == "two\nlines");
    CHECK(records[2].fields.size() == 3);
    CHECK(records[3].line == 6);
    CHECK(records[3].fields[2].text == "row");
    CHECK(records[3].fields[2].position.line == 6);
    CHECK(records[3].fields[2].position.column == 7);
}

TEST_CASE("csv reader: malformed quoting is an error at the character", "[skypilot][csv]") {
    CHECK(input_errors([] { gpusel::parse_csv_records("a,b\n1,\"open\n", "t.csv"); }) ==
          std::vector<std::string>{"t.csv:2:3: quoted field is not closed; a field that starts with \" ends with \""});
    CHECK(input_errors([] { gpusel::parse_csv_records("a,b\n\"x\"y,2\n", "t.csv"); }) ==
          std::vector<std::string>{
              "t.csv:2:4: text after the closing quote of a field; expected a comma or the end of the line"});
    CHECK(input_errors([] { gpusel::parse_csv_records("a,b\nx\"y,2\n", "t.csv"); }) ==
          std::vector<std::string>{
              "t.csv:2:2: a double quote inside an unquoted field; quote the whole field and double the quote"});
}

// ---------------------------------------------------------------------------------------------
// Paths and providers

TEST_CASE("skypilot: the path names schema and cloud", "[skypilot]") {
    const auto parts = gpusel::skypilot_path_parts("/home/me/.sky/catalogs/v8/aws/vms.csv");
    CHECK(parts.schema_version == "v8");
    CHECK(parts.cloud == "aws");
    CHECK(gpusel::skypilot_path_parts("v7/gcp/vms.csv").cloud == "gcp");
    CHECK(gpusel::skypilot_path_parts("catalogs/v8/aws/images.csv").cloud.empty());
    CHECK(gpusel::skypilot_path_parts("aws/vms.csv").cloud.empty());
    CHECK(gpusel::skypilot_path_parts("x/latest/aws/vms.csv").cloud.empty());
    CHECK(gpusel::skypilot_path_parts("vms.csv").schema_version.empty());
}

TEST_CASE("skypilot: provider tiers", "[skypilot]") {
    CHECK(gpusel::cloud_provider("aws").tier == gpusel::ProviderTier::hyperscaler);
    CHECK(gpusel::cloud_provider("oci").tier == gpusel::ProviderTier::hyperscaler);
    CHECK(gpusel::cloud_provider("lambda").tier == gpusel::ProviderTier::neocloud);
    CHECK(gpusel::cloud_provider("verda").tier == gpusel::ProviderTier::neocloud);
    CHECK(gpusel::cloud_provider("runpod").tier == gpusel::ProviderTier::marketplace);
    CHECK(gpusel::cloud_provider("vast").tier == gpusel::ProviderTier::marketplace);
    const gpusel::CloudProvider unknown = gpusel::cloud_provider("acme-gpu");
    CHECK_FALSE(unknown.known);
    CHECK(unknown.name == "acme-gpu");
    CHECK(gpusel::valid_provider_id("acme-gpu"));
    CHECK_FALSE(gpusel::valid_provider_id("Acme"));
    CHECK_FALSE(gpusel::valid_provider_id(""));
}

TEST_CASE("skypilot: SkyPilot's cloud names become the built-in catalog's provider ids", "[skypilot]") {
    // data/offers.yaml names DigitalOcean `digitalocean`; SkyPilot's folder is `do`.
    const gpusel::CloudProvider from_cloud = gpusel::cloud_provider("do");
    CHECK(from_cloud.known);
    CHECK(from_cloud.id == "digitalocean");
    CHECK(gpusel::test::catalog().find_provider(from_cloud.id) != nullptr);
    CHECK(gpusel::cloud_provider("digitalocean").id == "digitalocean");
    CHECK(gpusel::cloud_provider("aws").id == "aws");
}

TEST_CASE("skypilot: the built-in mapping tables name catalog GPUs, each entry with a source", "[skypilot]") {
    const gpusel::SkypilotMappings& mappings = gpusel::builtin_skypilot_mappings();
    CHECK(mappings.providers.size() >= 20);
    CHECK(mappings.gpu_rules.size() >= 20);
    CHECK_FALSE(mappings.gcp_machines.empty());
    CHECK_FALSE(mappings.known_counts.empty());
    CHECK_FALSE(mappings.gcp_attachable.empty());
    for (const gpusel::SkypilotGpuRule& rule : mappings.gpu_rules) {
        if (rule.kind == gpusel::SkypilotRuleKind::gpu) {
            INFO(rule.accelerator << " -> " << rule.gpu_or_reason);
            CHECK(gpusel::test::catalog().find(rule.gpu_or_reason) != nullptr);
        }
    }
}

TEST_CASE("skypilot: mapping-table errors are reported at file:line:col", "[skypilot]") {
    const std::string text =
        "format: 1\n"
        "providers:\n"
        "  - {cloud: do, id: DigitalOcean, name: DO, tier: cloudy, source: s, as_of: 2026-12}\n"
        "gpus:\n"
        "  - {accelerator: A100, gpu: A100-40GB-SXM4, as_of: 2026-13}\n"
        "  - {accelerator: H100, source: s, as_of: 2026-12}\n"
        "known_counts: []\n"
        "gcp_machines:\n"
        "  - {accelerator: L4, gpus: 0, machine_type: g2-standard-4, source: s, as_of: 2026-12}\n"
        "gcp_attachable: []\n";
    const std::vector<std::string> errors =
        input_errors([&] { gpusel::parse_skypilot_mappings(text, "skypilot.yaml"); });
    REQUIRE(errors.size() == 6);
    CHECK_THAT(errors[0], Catch::Matchers::StartsWith("skypilot.yaml:3:21: providers[0].id:"));
    CHECK_THAT(errors[1], Catch::Matchers::StartsWith("skypilot.yaml:3:51: providers[0].tier:"));
    CHECK_THAT(errors[2], Catch::Matchers::StartsWith("skypilot.yaml:5:5: gpus[0].source: missing required field"));
    CHECK_THAT(errors[3], Catch::Matchers::StartsWith("skypilot.yaml:5:53: gpus[0].as_of:"));
    CHECK_THAT(errors[4], Catch::Matchers::StartsWith("skypilot.yaml:6:5: gpus[1].gpu:"));
    CHECK_THAT(errors[5], Catch::Matchers::StartsWith("skypilot.yaml:9:29: gcp_machines[0].gpus:"));
}

// ---------------------------------------------------------------------------------------------
// Fixtures, one per cloud

TEST_CASE("skypilot: AWS v8", "[skypilot]") {
    const auto result = import_fixture("catalogs/v8/aws/vms.csv", "aws");
    CHECK(result.rows == 17);
    CHECK(result.gpu_rows == 16);
    CHECK(offer_ids(result) == std::vector<std::string>{"aws/p5.48xlarge", "aws/p5.4xlarge", "aws/p5e.48xlarge",
                                                        "aws/p4d.24xlarge", "aws/g7e.2xlarge", "aws/g6e.xlarge",
                                                        "aws/g4dn.12xlarge"});
    const auto& p5 = offer(result, "aws/p5.48xlarge");
    CHECK(p5.gpu == "H100-SXM5");
    CHECK(p5.gpus == 8);
    CHECK_FALSE(p5.reservation_only);
    REQUIRE(p5.prices.size() == 3);
    CHECK(p5.prices[0].region == "us-east-1");
    CHECK(p5.prices[0].on_demand_usd_per_hour == 55.04);
    // Every zone's spot is kept and ranks on the median: az6 17.6289, az2 19.2531; az1's 55.04 =
    // on-demand is dropped.
    CHECK(p5.prices[0].spot_zones_usd == std::vector<double>{17.6289, 19.2531});
    CHECK(p5.prices[0].spot_usd_per_hour == Approx((17.6289 + 19.2531) / 2));
    CHECK(p5.prices[0].zones == 3);
    CHECK(p5.prices[0].spot_zones == 2);
    CHECK(p5.prices[1].region == "us-west-2");
    CHECK(p5.prices[1].spot_usd_per_hour == 12.6935);
    CHECK(p5.prices[1].spot_zones_usd.empty());  // one zone: a plain price
    CHECK(p5.prices[2].region == "ap-northeast-1");
    CHECK(p5.prices[2].on_demand_usd_per_hour == 68.8);
    CHECK_FALSE(p5.prices[2].spot_usd_per_hour);

    const auto& p5e = offer(result, "aws/p5e.48xlarge");
    CHECK(p5e.gpu == "H200-SXM");
    CHECK(p5e.reservation_only);
    REQUIRE(p5e.prices.size() == 1);
    CHECK_FALSE(p5e.prices[0].on_demand_usd_per_hour);
    CHECK(p5e.prices[0].spot_usd_per_hour == 18.7359);

    CHECK(offer(result, "aws/p4d.24xlarge").gpu == "A100-40GB-SXM4");
    // The median of use1-az1 2.4655 and use1-az2 7.88, not the az1 outlier.
    CHECK(offer(result, "aws/p4d.24xlarge").prices[0].spot_usd_per_hour == Approx((2.4655 + 7.88) / 2));
    CHECK(offer(result, "aws/p4d.24xlarge").prices[0].spot_zones_usd == std::vector<double>{2.4655, 7.88});
    CHECK(offer(result, "aws/g6e.xlarge").prices[0].spot_usd_per_hour == Approx((0.9154 + 1.1975) / 2));
    CHECK(offer(result, "aws/g4dn.12xlarge").gpu == "T4");
    // AWS's "RTX PRO Server 6000" is the Server Edition, its own catalog entry (not RTX-PRO-6000).
    CHECK(offer(result, "aws/g7e.2xlarge").gpu == "RTX-PRO-6000-SE");

    CHECK(skip_lines(result) ==
          std::vector<std::string>{"12:15 AcceleratorCount: fractional GPU count (whole units only)",
                                   "17:13 AcceleratorName: unknown accelerator name (not guessed)"});
    CHECK(result.unknown_accelerators == std::vector<std::string>{"Inferentia2"});
    CHECK(warning_texts(result) ==
          std::vector<std::string>{"0 aws/p5.48xlarge: us-east-1: spot at or above on-demand in 1 of 3 zones "
                                   "(use1-az1); spot dropped there"});
}

TEST_CASE("skypilot: AWS v7 has no Arch column — a GpuInfo memory that disagrees is a warning", "[skypilot]") {
    const auto result = import_fixture("catalogs/v7/aws/vms.csv", "aws", "v7");
    CHECK(offer_ids(result) ==
          std::vector<std::string>{"aws/p3.2xlarge", "aws/p3dn.24xlarge", "aws/p4de.24xlarge", "aws/g6.2xlarge"});
    CHECK(offer(result, "aws/p3.2xlarge").gpu == "V100-SXM2-16GB");
    CHECK(offer(result, "aws/p3dn.24xlarge").gpu == "V100-SXM2-32GB");
    CHECK(offer(result, "aws/p4de.24xlarge").gpu == "A100-80GB-SXM4");
    CHECK(offer(result, "aws/p4de.24xlarge").prices[0].on_demand_usd_per_hour == 27.44705);
    CHECK(offer(result, "aws/g6.2xlarge").gpu == "L4");  // 22888 MiB is within 10 % of 24 GiB
    CHECK(result.skipped.empty());
    CHECK(warning_texts(result) ==
          std::vector<std::string>{"3 aws/p3dn.24xlarge: GpuInfo gives 16384 MiB (16.0 GiB) per GPU, the catalog's "
                                   "V100-SXM2-32GB has 32 GiB; the catalog spec is used"});
    const auto& notes = offer(result, "aws/p3dn.24xlarge").notes;
    CHECK_THAT(notes.back(), Catch::Matchers::Contains("the catalog spec is used"));
}

TEST_CASE("skypilot: GCP accelerator rows are summed with their host row", "[skypilot]") {
    const auto result = import_fixture("catalogs/v8/gcp/vms.csv", "gcp");
    CHECK(offer_ids(result) == std::vector<std::string>{"gcp/a2-highgpu-1g", "gcp/a2-highgpu-8g", "gcp/a2-ultragpu-8g",
                                                        "gcp/a3-highgpu-8g"});
    const auto& a2 = offer(result, "gcp/a2-highgpu-1g");
    CHECK(a2.gpu == "A100-40GB-SXM4");
    CHECK(a2.prices[0].on_demand_usd_per_hour == 3.67339);  // 0.73948 + 2.93391
    CHECK(a2.prices[0].spot_usd_per_hour == 1.80385);       // 0.36975 + 1.4341
    CHECK(offer(result, "gcp/a2-highgpu-8g").prices[0].on_demand_usd_per_hour == 29.38708);
    CHECK(offer(result, "gcp/a2-highgpu-8g").prices[0].spot_usd_per_hour == 14.4308);
    // The accelerator row's spot 15.712 is above its on-demand 14.76958: dropped, not hidden by the sum.
    const auto& ultra = offer(result, "gcp/a2-ultragpu-8g");
    CHECK(ultra.gpu == "A100-80GB-SXM4");
    CHECK(ultra.prices[0].on_demand_usd_per_hour == 23.56656);
    CHECK_FALSE(ultra.prices[0].spot_usd_per_hour);
    const auto& a3 = offer(result, "gcp/a3-highgpu-8g");
    CHECK(a3.gpu == "H100-SXM5");
    REQUIRE(a3.prices.size() == 2);
    CHECK(a3.prices[0].on_demand_usd_per_hour == 43.06615);
    CHECK(a3.prices[1].region == "us-east4");
    CHECK(a3.prices[1].on_demand_usd_per_hour == 87.83247);
    CHECK(a3.prices[1].spot_usd_per_hour == 20.04446);
    CHECK(skip_lines(result) ==
          std::vector<std::string>{"14:64 Region: no GCP host row for the machine type and zone",
                                   "15:91 Price: GCP host price 0.0 or empty (unknown)",
                                   "16:7 AcceleratorCount: GCP N1-attachable GPU (no one machine type; not imported)",
                                   "17:43 Price: placeholder price 700.0 (not a price)"});
    CHECK(warning_texts(result) ==
          std::vector<std::string>{
              "0 gcp/a2-ultragpu-8g: us-central1: spot at or above on-demand in 1 of 1 zone (us-central1-a); spot "
              "dropped there",
              "0 gcp/a3-highgpu-8g: on-demand differs more than 2× between regions (43.06615 in us-central1, "
              "87.83247 in us-east4); check before relying on it"});
}

TEST_CASE("skypilot: Lambda's one price in 17 regions collapses to region any", "[skypilot]") {
    const auto result = import_fixture("catalogs/v8/lambda/vms.csv", "lambda");
    CHECK(offer_ids(result) ==
          std::vector<std::string>{"lambda/gpu_8x_h100_sxm5", "lambda/gpu_1x_h100_pcie", "lambda/gpu_2x_a6000"});
    const auto& h100 = offer(result, "lambda/gpu_8x_h100_sxm5");
    CHECK(h100.gpu == "H100-SXM5");
    REQUIRE(h100.prices.size() == 1);
    CHECK(h100.prices[0].region == "any");
    CHECK(h100.prices[0].on_demand_usd_per_hour == 31.92);
    CHECK(h100.notes.front().rfind("the same on-demand price in 17 regions, written as region any: us-east-1, ", 0) ==
          0);
    CHECK(offer(result, "lambda/gpu_1x_h100_pcie").gpu == "H100-PCIE");
    CHECK(offer(result, "lambda/gpu_1x_h100_pcie").prices[0].region == "any");
    // One region stays a region.
    CHECK(offer(result, "lambda/gpu_2x_a6000").gpu == "RTX-A6000");
    CHECK(offer(result, "lambda/gpu_2x_a6000").prices[0].region == "us-west-1");
    CHECK(skip_lines(result) == std::vector<std::string>{"21:13 AcceleratorName: ambiguous accelerator (not guessed)",
                                                         "22:16 AcceleratorName: accelerator without a catalog entry"});
    CHECK(result.unknown_accelerators.empty());
    CHECK(result.warnings.empty());  // Lambda's total memory = one GPU is not read; no spot to drop
}

TEST_CASE("skypilot: RunPod stores GB in the MiB field, its spot equals on-demand", "[skypilot]") {
    const auto result = import_fixture("catalogs/v8/runpod/vms.csv", "runpod");
    CHECK(offer_ids(result) ==
          std::vector<std::string>{"runpod/1x_A100-80GB_SECURE", "runpod/2x_B200_SECURE", "runpod/3x_B200_SECURE"});
    const auto& a100 = offer(result, "runpod/1x_A100-80GB_SECURE");
    CHECK(a100.gpu == "A100-80GB-PCIE");
    CHECK(a100.prices.size() == 1);
    CHECK(a100.prices[0].region == "any");  // US and CA at 1.39, spot dropped
    CHECK(offer(result, "runpod/3x_B200_SECURE").gpus == 3);
    CHECK(offer(result, "runpod/3x_B200_SECURE").prices[0].on_demand_usd_per_hour == 20.37);
    CHECK(offer(result, "runpod/2x_B200_SECURE").notes ==
          std::vector<std::string>{"marketplace prices move hourly: re-import before deciding"});
    CHECK(result.warnings.size() == 4);  // spot = on-demand in every region; no memory warning
    for (const auto& warning : result.warnings) {
        CHECK_THAT(warning.message, Catch::Matchers::Contains("spot at or above on-demand"));
    }
    CHECK_THAT(result.yaml, Catch::Matchers::Contains("tier: marketplace"));
    CHECK_THAT(result.yaml, Catch::Matchers::Contains("instance_type: \"1x_A100-80GB_SECURE\""));
}

// ---------------------------------------------------------------------------------------------
// Rules on synthetic rows

TEST_CASE("skypilot: columns are read by name, whatever their order", "[skypilot]") {
    const std::string a =
        std::string(aws_header) + "p5.48xlarge,H100,8.0,192.0,2048.0,,55.04,19.2531,us-east-1,use1-az2,x86_64\n";
    const std::string b =
        "Region,SpotPrice,AvailabilityZone,Price,AcceleratorCount,AcceleratorName,InstanceType\n"
        "us-east-1,19.2531,use1-az2,55.04,8,H100,p5.48xlarge\n";
    auto first = import_text(a, "aws");
    auto second = import_text(b, "aws");
    CHECK(first.offers.size() == 1);
    CHECK(second.offers.size() == 1);
    CHECK(second.offers[0].prices[0].spot_usd_per_hour == 19.2531);
    CHECK(first.yaml == second.yaml);
}

TEST_CASE("skypilot: prices outside the per-GPU bounds are skipped, bad spot is dropped", "[skypilot]") {
    const std::string text = std::string(aws_header) +
                             "p5.48xlarge,H100,8.0,192.0,2048.0,,900.0,,us-east-1,use1-az1,x86_64\n"  // 112.5/GPU-h
                             "g6.2xlarge,L4,1.0,8.0,32.0,,0.005,,us-east-1,use1-az1,x86_64\n"
                             "p4d.24xlarge,A100,8.0,96.0,1152.0,,21.957642,700.0,us-east-1,use1-az1,x86_64\n"
                             "p4d.24xlarge,A100,8.0,96.0,1152.0,,21.957642,0,us-east-1,use1-az2,x86_64\n";
    const auto result = import_text(text, "aws");
    CHECK(skip_lines(result) == std::vector<std::string>{"2:36 Price: per-GPU price outside $0.01..$100 per hour",
                                                         "3:29 Price: per-GPU price outside $0.01..$100 per hour"});
    REQUIRE(result.offers.size() == 1);
    CHECK_FALSE(result.offers[0].prices[0].spot_usd_per_hour);
    CHECK(result.offers[0].prices[0].zones == 2);
    REQUIRE(result.warnings.size() == 2);
    CHECK(result.warnings[0].line == 4);
    CHECK(result.warnings[0].message ==
          "us-east-1 use1-az1: spot 700.0 is not a usable price (0, the 700.0 placeholder or outside $0.01..$100 per "
          "GPU-hour); dropped");
    CHECK(result.warnings[1].line == 5);
}

TEST_CASE("skypilot: the same name maps by provider and family, unknown families are listed", "[skypilot]") {
    const std::string text =
        "InstanceType,AcceleratorName,AcceleratorCount,Price,SpotPrice,Region\n"
        "Standard_NC40ads_H100_v5,H100,1,6.98,,eastus\n"
        "Standard_ND96isr_H100_v5,H100,12,98.32,,eastus\n"
        "Standard_NC24ads_A100_v4,A100-80GB,1,3.673,0.444433,eastus\n"
        "Standard_ND96asr_v4,A100,8,27.197,2.99167,eastus\n"
        "Standard_NV36ads_A10_v5,A10,1,3.2,0.8,eastus\n"
        "Standard_XY1_H100,H100,1,7.0,,eastus\n";
    const auto result = import_text(text, "azure");
    CHECK(offer_ids(result) == std::vector<std::string>{"azure/Standard_NC40ads_H100_v5",
                                                        "azure/Standard_NC24ads_A100_v4", "azure/Standard_ND96asr_v4",
                                                        "azure/Standard_NV36ads_A10_v5"});
    CHECK(result.offers[0].gpu == "H100-NVL");
    CHECK(result.offers[1].gpu == "A100-80GB-PCIE");
    CHECK(result.offers[2].gpu == "A100-40GB-SXM4");
    CHECK(result.offers[3].gpu == "A10");  // same-name catalog id
    CHECK(skip_lines(result) ==
          std::vector<std::string>{"3:31 AcceleratorCount: GPU count disagrees with the instance type",
                                   "7:19 AcceleratorName: unknown accelerator name (not guessed)"});
    CHECK(result.unknown_accelerators == std::vector<std::string>{"H100 on azure Standard_XY1_H100"});
}

TEST_CASE("skypilot: an instance type listed with two accelerators keeps the first", "[skypilot]") {
    const std::string text =
        "InstanceType,AcceleratorName,AcceleratorCount,Price,SpotPrice,Region\n"
        "g6e.xlarge,L40S,1,1.861,,us-east-1\n"
        "g6e.xlarge,L4,1,1.9,,us-west-2\n";
    const auto result = import_text(text, "aws");
    REQUIRE(result.offers.size() == 1);
    CHECK(result.offers[0].prices.size() == 1);
    REQUIRE(result.skipped.size() == 1);
    CHECK(result.skipped[0].reason == "conflicting accelerator for the instance type");
    CHECK(result.skipped[0].detail == "line 2 says L40S × 1");
}

TEST_CASE("skypilot: the YAML is a format-2 catalog of rental offers", "[skypilot]") {
    const auto result = import_fixture("catalogs/v8/aws/vms.csv", "aws");
    const gpusel::YamlNode root = gpusel::parse_yaml_text(result.yaml, "out.yaml");
    CHECK(root.find("format")->scalar == "2");
    CHECK(root.find("as_of")->scalar == "2026-11");
    const gpusel::YamlNode& provider = root.find("providers")->items.at(0);
    CHECK(provider.find("id")->scalar == "aws");
    CHECK(provider.find("kind")->scalar == "cloud");
    CHECK(provider.find("tier")->scalar == "hyperscaler");
    const gpusel::YamlNode* rental = root.find("rental");
    REQUIRE(rental != nullptr);
    REQUIRE(rental->items.size() == 7);
    const gpusel::YamlNode& p5 = rental->items[0];
    CHECK(p5.find("id")->scalar == "aws/p5.48xlarge");
    CHECK(p5.find("gpus")->scalar == "8");
    CHECK(p5.find("price_kind")->scalar == "list");
    CHECK(p5.find("sources")->items.at(0).scalar == "skypilot-catalog v8/aws/vms.csv imported 2026-12-01 from vms.csv");
    const gpusel::YamlNode& east = p5.find("prices")->items.at(0);
    CHECK(east.find("region")->scalar == "us-east-1");
    CHECK(east.find("on_demand")->scalar == "55.04");
    const gpusel::YamlNode* zones = east.find("spot")->find("zones");
    REQUIRE(zones != nullptr);
    REQUIRE(zones->items.size() == 2);
    CHECK(zones->items[0].scalar == "17.6289");
    CHECK(zones->items[1].scalar == "19.2531");
    CHECK(p5.find("prices")->items.at(1).find("spot")->scalar == "12.6935");
    const gpusel::YamlNode& p5e = rental->items[2];
    CHECK(p5e.find("availability")->scalar == "reservation_only");
    CHECK(p5e.find("prices")->items.at(0).find("on_demand") == nullptr);
}

TEST_CASE("skypilot: malformed files are errors with every position", "[skypilot]") {
    const auto errors = [](const std::string& name) {
        return input_errors([&] {
            gpusel::import_skypilot_csv(read_text(fixture("bad/" + name)), name, options_for("aws"),
                                        gpusel::test::catalog());
        });
    };
    CHECK(errors("missing-column.csv") ==
          std::vector<std::string>{"missing-column.csv:1:1: SpotPrice: missing required column",
                                   "missing-column.csv:1:1: Region: missing required column; is 'Regoin' meant?"});
    CHECK(errors("ragged.csv") ==
          std::vector<std::string>{
              "ragged.csv:3:48: row has 9 fields; the header has 11",
              "ragged.csv:4:100: row has 12 fields; the header has 11 (a field with a comma must be quoted)"});
    CHECK(errors("bad-number.csv") ==
          std::vector<std::string>{
              "bad-number.csv:2:18: AcceleratorCount: 'eight' is not a number; expected a GPU count such as 8 or "
              "0.125, or an empty cell",
              "bad-number.csv:2:175: Price: '$55.04' is not a number; expected USD per instance-hour such as 3.912, "
              "or an empty cell",
              "bad-number.csv:3:179: SpotPrice: '-1' is negative; expected USD per instance-hour such as 1.4134, or an "
              "empty cell"});
    CHECK(errors("zero-price.csv") ==
          std::vector<std::string>{"zero-price.csv:2:173: Price: row skipped: price 0 (not a price; an unknown price "
                                   "is an empty cell): p5.48xlarge H100 × 8",
                                   "zero-price.csv: no offer imported: the one GPU row was skipped; nothing written"});
    CHECK(errors("placeholder-price.csv").front() ==
          "placeholder-price.csv:2:173: Price: row skipped: placeholder price 700.0 (not a price): p4d.24xlarge A100 "
          "× 8");
    CHECK(errors("unknown-accelerator.csv").size() == 3);
    CHECK(input_errors([] { import_text("", "aws"); }) ==
          std::vector<std::string>{"vms.csv:1:1: empty file; expected a SkyPilot vms.csv with a header line"});
    CHECK(input_errors([] { import_text("InstanceType\xFF\n", "aws"); }) ==
          std::vector<std::string>{"vms.csv:1:13: invalid UTF-8 (byte \\xFF); SkyPilot catalogs are UTF-8"});
    CHECK(input_errors([] {
              auto options = options_for("azure", "v6");
              gpusel::import_skypilot_csv("x", "v6/azure/vms.csv", options, gpusel::test::catalog());
          })
              .front()
              .find("v6/azure/vms.csv: SkyPilot catalog schema v6 is not supported") == 0);
}

// ---------------------------------------------------------------------------------------------
// The command

TEST_CASE("skypilot: the command writes -o whole, or nothing on bad input", "[skypilot][cli]") {
    const std::filesystem::path directory =
        std::filesystem::temp_directory_path() / ("gpusel-skypilot-" + std::to_string(::getpid()));
    std::filesystem::remove_all(directory);
    std::filesystem::create_directories(directory / "catalogs/v8/aws");
    const std::string source = (directory / "catalogs/v8/aws/vms.csv").string();
    std::filesystem::copy_file(fixture("catalogs/v8/aws/vms.csv"), source);
    // 2026-03-15 UTC: the month the prices are dated when --as-of is absent.
    const utimbuf times{1773532800, 1773532800};
    REQUIRE(::utime(source.c_str(), &times) == 0);
    const std::string target = (directory / "offers.yaml").string();

    std::ostringstream out;
    std::ostringstream err;
    CHECK(gpusel::cli::run({"catalog", "import", "skypilot", source, "-o", target}, out, err) == 0);
    CHECK(out.str().empty());
    CHECK(err.str().find(source + ": warning: the file carries no date; as_of 2026-03 is its modification month") == 0);
    CHECK(err.str().find("gpusel: imported 7 offers from 17 rows of " + source) != std::string::npos);
    const std::string written = read_text(target);
    CHECK_THAT(written, Catch::Matchers::Contains("as_of: 2026-03\n"));
    CHECK_THAT(written, Catch::Matchers::Contains("- id: aws/p5.48xlarge\n"));

    // An existing file is not replaced without --force.
    std::ostringstream out2;
    std::ostringstream err2;
    CHECK(gpusel::cli::run({"catalog", "import", "skypilot", source, "--as-of", "2026-11", "-o", target}, out2, err2) ==
          4);
    CHECK(read_text(target) == written);

    // Bad input: exit 3, nothing written.
    const std::string other = (directory / "other.yaml").string();
    std::ostringstream out3;
    std::ostringstream err3;
    CHECK(gpusel::cli::run({"catalog", "import", "skypilot", fixture("bad/ragged.csv"), "--provider", "aws", "--as-of",
                            "2026-11", "-o", other},
                           out3, err3) == 3);
    CHECK_FALSE(std::filesystem::exists(other));

    // The output may not be the input, even with --force.
    std::ostringstream out4;
    std::ostringstream err4;
    CHECK(gpusel::cli::run({"--force", "catalog", "import", "skypilot", source, "--as-of", "2026-11", "-o", source},
                           out4, err4) == 2);
    CHECK(read_text(source) == read_text(fixture("catalogs/v8/aws/vms.csv")));
    std::filesystem::remove_all(directory);
}

TEST_CASE("skypilot: every imported file loads as a format-2 catalog over the built-in one", "[skypilot][offers]") {
    struct Fixture {
        const char* path;
        const char* provider;
        const char* version;
    };
    for (const Fixture& file :
         {Fixture{"catalogs/v8/aws/vms.csv", "aws", "v8"}, Fixture{"catalogs/v7/aws/vms.csv", "aws", "v7"},
          Fixture{"catalogs/v8/gcp/vms.csv", "gcp", "v8"}, Fixture{"catalogs/v8/lambda/vms.csv", "lambda", "v8"},
          Fixture{"catalogs/v8/runpod/vms.csv", "runpod", "v8"}}) {
        INFO(file.path);
        const gpusel::SkypilotImportResult result = import_fixture(file.path, file.provider, file.version);
        gpusel::Catalog catalog = gpusel::test::catalog();
        gpusel::merge_catalog_text(catalog, result.yaml, "imported.yaml");
        REQUIRE(!result.offers.empty());
        for (const gpusel::ImportedOffer& imported : result.offers) {
            INFO(imported.id);
            const gpusel::Offer* loaded = catalog.find_offer(imported.id);
            REQUIRE(loaded != nullptr);
            CHECK(loaded->kind == gpusel::OfferKind::rental);
            CHECK(loaded->provider == file.provider);
            CHECK(loaded->gpu == imported.gpu);
            CHECK(loaded->gpus_per_unit == imported.gpus);
            CHECK(loaded->price_kind == gpusel::PriceKind::list);
            CHECK(loaded->as_of == "2026-11");
            REQUIRE(loaded->rates.size() == imported.prices.size());
            for (std::size_t i = 0; i < imported.prices.size(); ++i) {
                const gpusel::RegionalRates& rates = loaded->rates[i];
                CHECK(rates.region == imported.prices[i].region);
                CHECK(rates.on_demand.has_value() == imported.prices[i].on_demand_usd_per_hour.has_value());
                if (rates.on_demand) {
                    CHECK(rates.on_demand->usd == Approx(*imported.prices[i].on_demand_usd_per_hour));
                }
                CHECK(rates.spot.has_value() == imported.prices[i].spot_usd_per_hour.has_value());
            }
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Hostile files at scale (issue 38): the output always loads, the reader is linear and keeps
// nothing per row.

namespace {

constexpr const char* short_header =
    "InstanceType,AcceleratorName,AcceleratorCount,Price,SpotPrice,Region,AvailabilityZone\n";

// What `gpusel --catalog` does with the output: it must load.
std::size_t loaded_offers(const std::string& yaml) {
    gpusel::Catalog catalog = gpusel::test::catalog();
    const std::size_t before = catalog.offers().size();
    gpusel::merge_catalog_text(catalog, yaml, "out.yaml");
    return catalog.offers().size() - before;
}

}  // namespace

TEST_CASE("skypilot: an instance type no offer id can hold is a skipped row naming it and the output loads",
          "[skypilot][hostile]") {
    const std::string text = std::string(short_header) + "g4.ok,L4,1,0.8,,us-east-1,us-east-1a\n" +
                             "g4 space,L4,1,0.8,,us-east-1,us-east-1a\n" + "\"g4\nnewline\",L4,1,0.8,,us-east-1,a\n" +
                             std::string("g4") + '\0' + "nul,L4,1,0.8,,us-east-1,a\n" + std::string(100, 'x') +
                             ",L4,1,0.8,,us-east-1,a\n";
    const auto result = import_text(text, "aws");
    CHECK(offer_ids(result) == std::vector<std::string>{"aws/g4.ok"});
    CHECK(skip_lines(result) == std::vector<std::string>{"3:1 InstanceType: instance type not usable in an offer id",
                                                         "4:1 InstanceType: instance type not usable in an offer id",
                                                         "6:1 InstanceType: instance type not usable in an offer id",
                                                         "7:1 InstanceType: instance type not usable in an offer id"});
    CHECK(gpusel::skypilot_import_summary(result, "vms.csv", "out.yaml") ==
          "gpusel: imported 1 offer from 5 rows of vms.csv (5 GPU rows) into out.yaml\n"
          "gpusel: skipped 4 GPU rows:\n"
          "  instance type not usable in an offer id: 4 rows (line 3 L4 × 1: 'g4 space' has a character other than "
          "letters, digits, '-', '_', '.' and '/'; line 4 L4 × 1: 'g4\\x0anewline' has a character other than "
          "letters, digits, '-', '_', '.' and '/'; line 6 L4 × 1: 'g4\\x00nul' has a character other than letters, "
          "digits, '-', '_', '.' and '/'; …)\n");
    CHECK(result.skipped[3].detail ==
          "'aws/xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx…' is 104 characters, over the 96 of an "
          "offer id");
    CHECK(loaded_offers(result.yaml) == 1);
}

TEST_CASE("skypilot: an output over a catalog file's limits is refused at the row that crosses them",
          "[skypilot][hostile]") {
    // 8,001 instance types: 22 values each plus a price line of at least 3 pass the 200,000 a
    // catalog file may hold. Refused while reading, before any YAML is built.
    std::string types = short_header;
    for (int i = 0; i < 8100; ++i) {
        types += "t" + std::to_string(i) + ",L4,1,0.8,,us-east-1,a\n";
    }
    CHECK(input_errors([&] { import_text(types, "aws"); }) ==
          std::vector<std::string>{
              "vms.csv:8002:1: the imported catalog would hold more than the 200000 values a catalog file may (8001 "
              "offers and 8000 regional prices by this row); import part of the file with --regions GLOB,... or "
              "--instance-types GLOB,..., or split it; nothing written"});
    // One instance type in 39,993 regions of distinct prices: 5 values a line, counted exactly once
    // the offers are known (18 + 22 + 39,993 × 5 = 200,005).
    std::string regions = short_header;
    for (int i = 0; i < 39993; ++i) {
        regions += "t,L4,1," + std::to_string(1 + i % 7) + ",,r" + std::to_string(i) + ",a\n";
    }
    CHECK(input_errors([&] { import_text(regions, "aws"); }) ==
          std::vector<std::string>{
              "vms.csv: the imported catalog would hold more than the 200000 values a catalog file may (1 offer and "
              "39993 regional prices); import part of the file with --regions GLOB,... or --instance-types "
              "GLOB,..., or split it; nothing written"});
}

TEST_CASE("skypilot: --regions and --instance-types import part of a file", "[skypilot][hostile]") {
    const std::string text = std::string(short_header) + "g4.a,L4,1,0.8,,us-east-1,a\n" +
                             "g4.a,L4,1,0.8,,eu-west-1,a\n" + "p5.b,L4,1,0.8,,us-west-2,a\n";
    gpusel::SkypilotImportOptions options = options_for("aws");
    options.regions = {"US-*"};
    options.instance_types = {"g4.?"};
    const auto result = gpusel::import_skypilot_csv(text, "vms.csv", options, gpusel::test::catalog());
    CHECK(offer_ids(result) == std::vector<std::string>{"aws/g4.a"});
    REQUIRE(result.offers[0].prices.size() == 1);
    CHECK(result.offers[0].prices[0].region == "us-east-1");
    CHECK(gpusel::skypilot_import_summary(result, "vms.csv", "out.yaml") ==
          "gpusel: imported 1 offer from 3 rows of vms.csv (1 GPU rows; 2 more not selected by "
          "--regions/--instance-types) into out.yaml\n");
    options.regions = {"ap-*"};
    CHECK(input_errors([&] { gpusel::import_skypilot_csv(text, "vms.csv", options, gpusel::test::catalog()); }) ==
          std::vector<std::string>{"vms.csv: no offer imported: none of the 3 GPU rows is selected by "
                                   "--regions/--instance-types; nothing written"});
}

TEST_CASE("skypilot: regions of one instance type are hashed (linear) and a note lists 50 of them",
          "[skypilot][hostile]") {
    // A linear search per row made this quadratic: 10^5 regions took minutes.
    std::string text = short_header;
    for (int i = 0; i < 60000; ++i) {
        text += "t,L4,1,0.8,,r" + std::to_string(i) + ",a\n";
    }
    const auto result = import_text(text, "aws");
    REQUIRE(result.offers.size() == 1);
    REQUIRE(result.offers[0].prices.size() == 1);
    CHECK(result.offers[0].prices[0].region == "any");
    CHECK(result.offers[0].prices[0].zones == 60000);
    const std::string& note = result.offers[0].notes.at(0);
    CHECK(note.rfind("the same on-demand price in 60000 regions, written as region any: r0, r1, r2,", 0) == 0);
    CHECK(note.substr(note.size() - 23) == "r48, r49 and 59950 more");
    CHECK(loaded_offers(result.yaml) == 1);
}

TEST_CASE("skypilot: a region's spot lists every zone up to 32, then writes the median alone", "[skypilot][hostile]") {
    const auto zones_of = [](int count) {
        std::string text = short_header;
        for (int i = 1; i <= count; ++i) {
            // Spot 0.01 × i: 0.01 .. 0.01 × count, below on-demand 0.8.
            text += fmt::format("t,L4,1,0.8,{},us-east-1,z{}\n", 0.01 * i, i);
        }
        return text;
    };
    const auto listed = import_text(zones_of(32), "aws");
    REQUIRE(listed.offers.size() == 1);
    CHECK(listed.offers[0].prices[0].spot_zones_usd.size() == 32);
    CHECK(listed.offers[0].prices[0].spot_usd_per_hour == Approx(0.165));  // (0.16 + 0.17) / 2
    CHECK(listed.warnings.empty());
    CHECK(loaded_offers(listed.yaml) == 1);
    const auto summarised = import_text(zones_of(33), "aws");
    CHECK(summarised.offers[0].prices[0].spot_zones_usd.empty());
    CHECK(summarised.offers[0].prices[0].spot_usd_per_hour == Approx(0.17));
    CHECK(warning_texts(summarised) ==
          std::vector<std::string>{"0 aws/t: us-east-1: spot in 33 zones, more than a "
                                   "region has: their median 0.17 is written, not the list"});
    CHECK(summarised.yaml.find("spot: 0.17}") != std::string::npos);
}

TEST_CASE("skypilot: rows are not kept and skipped rows and warnings are counted past what is kept",
          "[skypilot][hostile]") {
    // 200,000 empty rows: read and dropped one at a time (6 million were 5 GB as vectors).
    std::string empty = short_header;
    for (int i = 0; i < 200000; ++i) {
        empty += ",,,,,,\n";
    }
    CHECK(input_errors([&] { import_text(empty, "aws"); }) ==
          std::vector<std::string>{"vms.csv: no offer imported: none of the 200000 rows names an accelerator"});

    std::string rows = short_header;
    for (int i = 0; i < 1500; ++i) {
        rows += "t,L4,1,0.8,0,us-east-1,z" + std::to_string(i) + "\n";  // spot 0: a warning each
    }
    for (int i = 0; i < 1200; ++i) {
        rows += "u,L4,0.5,0.8,,us-east-1,z\n";  // fractional: skipped
    }
    const auto result = import_text(rows, "aws");
    CHECK(result.warnings.size() == gpusel::max_kept_warnings);
    CHECK(result.warnings_not_kept == 500);
    CHECK(result.skipped.size() == gpusel::max_kept_skipped_rows);
    CHECK(result.skipped_rows == 1200);
    REQUIRE(result.skip_groups.size() == 1);
    CHECK(result.skip_groups[0].rows == 1200);
    CHECK(result.skip_groups[0].examples.size() == gpusel::max_skip_examples);
    CHECK(gpusel::skypilot_import_summary(result, "vms.csv", "out.yaml") ==
          "gpusel: imported 1 offer from 2700 rows of vms.csv (2700 GPU rows) into out.yaml\n"
          "gpusel: skipped 1200 GPU rows:\n"
          "  fractional GPU count (whole units only): 1200 rows (line 1502 u L4 × 0.5; line 1503 u L4 × 0.5; line "
          "1504 u L4 × 0.5; …)\n");
}

TEST_CASE("csv reader: records one at a time reuse their fields", "[skypilot][csv]") {
    const std::string file = "t.csv";
    gpusel::CsvRecordReader reader("a,b,c\n\n1,2\n", file);
    gpusel::CsvRecord record;
    REQUIRE(reader.next(record));
    CHECK(record.fields.size() == 3);
    REQUIRE(reader.next(record));
    CHECK(record.line == 3);
    REQUIRE(record.fields.size() == 2);
    CHECK(record.fields[1].text == "2");
    CHECK(record.end_column == 4);
    CHECK_FALSE(reader.next(record));
}
