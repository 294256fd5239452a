#include "core/dtype.h"

#include <array>
#include <utility>

namespace tf {

namespace {
constexpr std::array<std::pair<DType, std::string_view>, 10> kNames{{
    {DType::BF16, "BF16"}, {DType::F16, "F16"}, {DType::F32, "F32"}, {DType::F64, "F64"},
    {DType::I8, "I8"},     {DType::I16, "I16"}, {DType::I32, "I32"}, {DType::I64, "I64"},
    {DType::U8, "U8"},     {DType::BOOL, "BOOL"},
}};
}  // namespace

size_t dtype_size(DType t) {
  switch (t) {
    case DType::BF16: case DType::F16: case DType::I16: return 2;
    case DType::F32: case DType::I32: return 4;
    case DType::F64: case DType::I64: return 8;
    case DType::I8: case DType::U8: case DType::BOOL: return 1;
  }
  return 0;
}

std::string_view dtype_name(DType t) {
  for (auto& [d, n] : kNames) if (d == t) return n;
  return "?";
}

std::optional<DType> dtype_from_name(std::string_view name) {
  for (auto& [d, n] : kNames) if (n == name) return d;
  return std::nullopt;
}

}  // namespace tf
