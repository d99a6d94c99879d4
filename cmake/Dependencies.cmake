# Every dependency comes from a Debian bookworm package (scripts/bootstrap.sh installs them).
find_package(fmt 9 CONFIG REQUIRED)               # libfmt-dev
find_package(nlohmann_json 3.11 CONFIG REQUIRED)  # nlohmann-json3-dev
find_package(CLI11 2.1 CONFIG REQUIRED)           # libcli11-dev
find_package(yaml-cpp 0.7 CONFIG REQUIRED)        # libyaml-cpp-dev
# Hugging Face downloads (src/inputs/hf_hub.cpp): FindCURL, the CURL::libcurl target.
find_package(CURL 7.85 REQUIRED)                  # libcurl4-openssl-dev
# yaml-cpp 0.7 exports a target without namespace (the namespaced one came in 0.8).
if(NOT TARGET yaml-cpp::yaml-cpp)
  add_library(yaml-cpp::yaml-cpp ALIAS yaml-cpp)
endif()

# libxlsxwriter-dev ships a pkg-config file but no CMake package.
find_package(PkgConfig REQUIRED)
pkg_check_modules(XLSXWRITER REQUIRED IMPORTED_TARGET xlsxwriter)
add_library(xlsxwriter::xlsxwriter ALIAS PkgConfig::XLSXWRITER)
