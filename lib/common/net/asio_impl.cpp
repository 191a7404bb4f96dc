// SPDX-License-Identifier: Apache-2.0
// Asio, Asio SSL and Beast compiled once for the whole project (docs/architecture.md §7): every other
// translation unit sees BOOST_ASIO_SEPARATE_COMPILATION / BOOST_BEAST_SEPARATE_COMPILATION
// through the common_net target and includes only declarations.
#include <boost/asio/impl/src.hpp>
#include <boost/asio/ssl/impl/src.hpp>
#include <boost/beast/src.hpp>
