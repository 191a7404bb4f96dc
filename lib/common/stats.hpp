// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file
/// Building blocks of the modules' statistics seams: plain values that a module updates on
/// its own thread and that anyone holding a const reference reads (the admin server renders
/// them as Prometheus metrics; tests read them directly). No globals, no locks: every module
/// runs on the one event-loop thread.

#include <algorithm>
#include <array>
#include <cstdint>
#include <span>
#include <vector>

namespace iss::stats {

/// Upper bounds (seconds) of the duration histograms: 1 ms .. 60 s.
inline constexpr std::array<double, 14> duration_bounds{0.001, 0.005, 0.01, 0.025, 0.05, 0.1,  0.25,
                                                        0.5,   1.0,   2.5,  5.0,   10.0, 30.0, 60.0};

/// A histogram with fixed upper bounds (Prometheus semantics: a sample v falls in the first
/// bucket whose bound is >= v; samples above the last bound count only in the implicit +Inf
/// bucket).
struct histogram {
    histogram() : histogram(duration_bounds) {}
    explicit histogram(std::span<const double> b) : bounds(b.begin(), b.end()), counts(b.size(), 0) {}

    /// Adds one sample (seconds for the duration histograms).
    void observe(double v) {
        const auto it = std::lower_bound(bounds.begin(), bounds.end(), v);
        if (it != bounds.end()) counts[static_cast<std::size_t>(it - bounds.begin())] += 1;
        sum += v;
        count += 1;
    }
    /// Samples <= bounds[i] (cumulative), for i < bounds.size().
    [[nodiscard]] std::uint64_t cumulative(std::size_t i) const {
        std::uint64_t n = 0;
        for (std::size_t j = 0; j <= i && j < counts.size(); ++j) n += counts[j];
        return n;
    }

    std::vector<double> bounds;         ///< ascending upper bounds
    std::vector<std::uint64_t> counts;  ///< samples per bucket (not cumulative), one per bound
    double sum = 0;                     ///< sum of all samples
    std::uint64_t count = 0;            ///< number of samples (the +Inf bucket)
};

}  // namespace iss::stats
