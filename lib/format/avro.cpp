#include "format/table.hpp"
namespace iss::format {
std::unique_ptr<table_writer> make_avro_writer(std::vector<column>, avro_options) { return nullptr; }
}  // namespace iss::format
