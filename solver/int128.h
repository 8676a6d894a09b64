// A 128-bit integer for arithmetic on user-declared int64 ranges (their spans, products of their
// bounds), which may overflow 64 bits. GCC and Clang provide it; __extension__ keeps -Wpedantic
// quiet about the non-standard type.
#pragma once

namespace ncv::solver {

__extension__ typedef __int128 Int128;

}  // namespace ncv::solver
