// SPDX-License-Identifier: Apache-2.0
// common/cpus.hpp: the CPUs a cgroup v2 tree allows, over a fake tree in a temporary folder.
#include "common/cpus.hpp"

#include "catch2_compat.hpp"
#include <fmt/format.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

namespace {

/// A cgroup v2 tree in a temporary folder: `cpu.max` files at the given levels.
struct fake_cgroup {
    std::filesystem::path root;
    fake_cgroup() {
        root = std::filesystem::temp_directory_path() / fmt::format("iss-cgroup-{}", ::getpid());
        std::filesystem::remove_all(root);
        std::filesystem::create_directories(root / "kubepods.slice/pod1/container");
    }
    ~fake_cgroup() { std::filesystem::remove_all(root); }
    void cpu_max(const std::string& rel, const std::string& line) const {
        std::ofstream{root / rel / "cpu.max"} << line << "\n";
    }
};

}  // namespace

TEST_CASE("the cgroup's cpu.max quota is rounded up to whole CPUs", "[cpus]") {
    fake_cgroup cg;
    const std::string self = "0::/kubepods.slice/pod1/container\n";
    cg.cpu_max("kubepods.slice/pod1/container", "150000 100000");  // 1.5 CPUs
    CHECK(iss::cgroup_cpu_limit(cg.root, self) == 2U);
    cg.cpu_max("kubepods.slice/pod1/container", "200000 100000");
    CHECK(iss::cgroup_cpu_limit(cg.root, self) == 2U);
    cg.cpu_max("kubepods.slice/pod1/container", "10000 100000");  // a tenth: still one worker
    CHECK(iss::cgroup_cpu_limit(cg.root, self) == 1U);
}

TEST_CASE("the smallest quota on the way up to the root applies", "[cpus]") {
    fake_cgroup cg;
    const std::string self = "0::/kubepods.slice/pod1/container\n";
    cg.cpu_max("kubepods.slice/pod1/container", "max 100000");
    CHECK_FALSE(iss::cgroup_cpu_limit(cg.root, self).has_value());  // no quota anywhere
    cg.cpu_max("kubepods.slice/pod1", "300000 100000");             // the pod's limit, above the container
    CHECK(iss::cgroup_cpu_limit(cg.root, self) == 3U);
    cg.cpu_max("kubepods.slice", "100000 50000");
    CHECK(iss::cgroup_cpu_limit(cg.root, self) == 2U);
    cg.cpu_max("", "50000 100000");  // a cgroup namespace's own root
    CHECK(iss::cgroup_cpu_limit(cg.root, self) == 1U);
}

TEST_CASE("no cgroup v2 line or no cpu.max means no cgroup limit", "[cpus]") {
    fake_cgroup cg;
    cg.cpu_max("kubepods.slice/pod1/container", "200000 100000");
    CHECK_FALSE(iss::cgroup_cpu_limit(cg.root, "").has_value());
    CHECK_FALSE(iss::cgroup_cpu_limit(cg.root, "4:cpu,cpuacct:/kubepods/pod1\n").has_value());  // cgroup v1
    CHECK_FALSE(iss::cgroup_cpu_limit(cg.root, "0::/elsewhere\n").has_value());
    CHECK(iss::cgroup_cpu_limit(cg.root, "1:name=systemd:/x\n0::/kubepods.slice/pod1/container\n") == 2U);
    // A cgroup outside the namespace ("/../..") counts from the mount's root only.
    cg.cpu_max("", "400000 100000");
    CHECK(iss::cgroup_cpu_limit(cg.root, "0::/../../other\n") == 4U);
}
