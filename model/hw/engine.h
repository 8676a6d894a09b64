// The engines of a NeuronCore that instructions run on: the four compute engines and the DMA
// queues (ARCH2 "NeuronCore-v2 compute engines").
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace ncv {
inline namespace hw {

enum class Engine : uint8_t { Tensor, Vector, Scalar, GpSimd, Dma };

std::string_view engine_name(Engine e);  // "tensor", "vector", "scalar", "gpsimd", "dma"
std::optional<Engine> parse_engine(std::string_view s);

}  // namespace hw
}  // namespace ncv
