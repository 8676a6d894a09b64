// The text names of the engines and memories (the .nkir spellings).
#include <array>

#include "model/hw/engine.h"
#include "model/hw/memory.h"

namespace ncv {
inline namespace hw {

namespace {

constexpr std::array<std::string_view, 5> kEngineNames = {"tensor", "vector", "scalar", "gpsimd",
                                                          "dma"};

}  // namespace

std::string_view engine_name(Engine e) {
  return kEngineNames.at(static_cast<size_t>(e));
}

std::optional<Engine> parse_engine(std::string_view s) {
  for (size_t i = 0; i < kEngineNames.size(); ++i) {
    if (kEngineNames[i] == s) return static_cast<Engine>(i);
  }
  return std::nullopt;
}

std::string_view memory_name(Memory m) {
  switch (m) {
    case Memory::HBM:
      return "hbm";
    case Memory::SBUF:
      return "sbuf";
    case Memory::PSUM:
      return "psum";
  }
  return "?";
}

}  // namespace hw
}  // namespace ncv
