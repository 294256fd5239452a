#pragma once
// Element types as safetensors names them.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace tf {

enum class DType : uint8_t { BF16, F16, F32, F64, I8, I16, I32, I64, U8, BOOL };

size_t dtype_size(DType t);
std::string_view dtype_name(DType t);
std::optional<DType> dtype_from_name(std::string_view name);

}  // namespace tf
