# SPDX-License-Identifier: Apache-2.0
# Every dependency is a Debian package, as Debian 12 and Debian 13 ship it (docs/development.md "Dependencies");
# scripts/install-deps installs them with each release's names. Version ranges, not pins: the lower
# end is what the code needs, the upper end the newest version it is built and tested with.
# Imported targets get SYSTEM include directories so third-party warnings never trip -Werror.

# Boost 1.81 (Debian 12's libboost1.81-dev) to 1.83 (Debian 13's default): Debian 12's default
# 1.74 lacks as_tuple, per-operation cancellation and awaitable operators (docs/architecture.md §8.0).
find_package(Boost 1.81...<1.84 REQUIRED CONFIG COMPONENTS system json)
find_package(OpenSSL 3 REQUIRED)
find_package(Threads REQUIRED)
find_package(fmt 9...<11 REQUIRED CONFIG)  # Debian 12: 9.1, Debian 13: 10.1
find_package(yaml-cpp 0.7...<0.9 REQUIRED CONFIG)  # Debian 12: 0.7, Debian 13: 0.8
if(NOT TARGET yaml-cpp::yaml-cpp)  # 0.8's name; 0.7 has only `yaml-cpp` (0.8 deprecates it)
  add_library(yaml-cpp::yaml-cpp ALIAS yaml-cpp)
endif()
find_package(simdjson REQUIRED CONFIG)
find_package(pugixml REQUIRED CONFIG)
find_package(ZLIB REQUIRED)
find_package(PkgConfig REQUIRED)
pkg_check_modules(XXHASH REQUIRED IMPORTED_TARGET libxxhash)
pkg_check_modules(ZSTD REQUIRED IMPORTED_TARGET libzstd)
pkg_check_modules(LIBDEFLATE REQUIRED IMPORTED_TARGET libdeflate)  # gzip objects, levels 4..9
pkg_check_modules(ISAL REQUIRED IMPORTED_TARGET libisal)  # gzip objects, levels 1..3 (ISA-L igzip)
pkg_check_modules(SNAPPY REQUIRED IMPORTED_TARGET snappy)   # Parquet page compression
pkg_check_modules(AVRO REQUIRED IMPORTED_TARGET avro-c)     # Avro datum encoding
# Catch2 3 (Debian 13: 3.7) or 2 (Debian 12: 2.13); tests/catch2_compat.hpp hides the difference.
find_package(Catch2 3 QUIET CONFIG)
if(NOT Catch2_FOUND)
  find_package(Catch2 2 REQUIRED CONFIG)
endif()

find_package(CLI11 2 REQUIRED CONFIG)  # the command line (daemon/): Debian 12 ships 2.1.2
find_package(date REQUIRED CONFIG)   # date::date-tz: time zones (GCC 12 has no std::chrono::tzdb)

# Boost headers without Asio's separate-compilation switch, for code that must not see Asio
# (proto, sigv4): Boost.System's error_code and result only.
add_library(iss_boost_headers INTERFACE)
target_link_libraries(iss_boost_headers INTERFACE Boost::headers)
target_compile_definitions(iss_boost_headers INTERFACE BOOST_ALLOW_DEPRECATED_HEADERS)

# Prometheus text exposition (lib/admin): prometheus-cpp's core only (its data model and
# text serializer); its pull library (civetweb, its own threads) is not used.
find_package(prometheus-cpp REQUIRED CONFIG)  # Debian 12: 1.0.1, Debian 13: 1.0.2 (its config file carries no version)

# systemd notify (daemon/notify.*): libsystemd's sd_notify when present at build time,
# else the daemon speaks the datagram protocol itself.
pkg_check_modules(LIBSYSTEMD QUIET IMPORTED_TARGET libsystemd)
