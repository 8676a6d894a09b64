// Lowerings of NKI calls that several kernel builders share: how an `nc_transpose` without
// `engine=` becomes IR instructions, and the identity matrix the direct-allocation kernels load
// from an `nl.shared_constant`.
#pragma once

#include <cstdint>
#include <string>

#include "model/ir/builder.h"

namespace ncv::kernels {

// nisa.nc_transpose without engine of a [p, f] SBUF tile into dst [f, p]: on the engine the
// compiler picks by shape (model/compiler nc_transpose_engine). On the Tensor engine it is an
// identity matmul into an fp32 PSUM tile named `psum_name`, declared in the current scope, and an
// unpinned copy back into dst (cast to dst's dtype); on the Vector engine one transpose.
void nc_transpose_unpinned(Builder& b, const std::string& psum_name, Access dst, Access src, Expr p,
                           Expr f);

// dst [128, 128] = the identity: `nl.load(nl.shared_constant(np.identity(128)))` generated on
// chip (memset 1.0, then an affine_select keeping the diagonal). The IR has no constant HBM
// tensors; the values are the same, the 32 KiB load becomes a memset and a GpSimd select.
void identity_on_chip(Builder& b, Access dst);

// Bytes per partition of one PSUM bank, the unit of the direct-allocation kernels' explicit PSUM
// placements (psum.mod_alloc / psum.alloc bank numbers): trn1's, from model/hw (hw_config.cpp
// cites it), since those kernels' sources are written for it.
int64_t psum_bank_bytes();

}  // namespace ncv::kernels
