// The memories a tensor lives in: device HBM and each core's on-chip SBUF and PSUM (ARCH2
// "memory hierarchy").
#pragma once

#include <cstdint>
#include <string_view>

namespace ncv {
inline namespace hw {

enum class Memory : uint8_t { HBM, SBUF, PSUM };

std::string_view memory_name(Memory m);  // "hbm", "sbuf", "psum"

}  // namespace hw
}  // namespace ncv
