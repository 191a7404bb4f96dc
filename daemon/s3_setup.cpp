#include "daemon/s3_setup.hpp"

#include <boost/asio/awaitable.hpp>

namespace iss::app {

// Placeholder until lib/s3 lands: the pipeline's S3 adapter plugs in here.
boost::asio::awaitable<result<s3_setup>> make_s3(boost::asio::any_io_executor, const config::sink_config&,
                                                 pipeline::consumer_mode) {
    co_return error{iss::errc::invalid_argument, "the S3 client (lib/s3) is not built into this binary yet"};
}

}  // namespace iss::app
