// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file
/// The production `sleeper`: a steady_timer wait that `interrupt()` ends early (stop). Callers
/// check their stop flag before waiting; `interrupt` only cuts the wait in progress short.

#include "pipeline/ports.hpp"

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/steady_timer.hpp>

namespace iss::pipeline {

/// Runs on one executor; not thread-safe. `interrupt` must be called on that executor.
class asio_sleeper final : public sleeper {
public:
    explicit asio_sleeper(boost::asio::any_io_executor ex) : timer_{ex} {}
    task<void> sleep_for(std::chrono::milliseconds d) override;
    void interrupt() override;

private:
    boost::asio::steady_timer timer_;
};

}  // namespace iss::pipeline
