"""Which differential case exercises which argument of which call, for both dialects.

TABLE[dialect][call][argument] names the case (or cases) that pass the argument with a value
other than its default, either compared with NumPy (a differential case) or refused at the
kernel's line with an error naming the argument (a refusal case). A case checks its own rows
when it runs (diffharness.run_case: each argument must have been passed by a kernel of the case),
and coverage_test.py checks that the rows cover every argument of every call the front end
registers (ncverify_nki.signatures.SIGNATURES) and that every name of the dialect's API facade
(ncverify_nki.allowlist.NKI_API) is a registered call, a call refused as a whole
(UNSUPPORTED), or listed in OTHER with its case or the reason it is not a call.
"""

# Arguments shared by families of calls.
_NL_UNARY = ("abs", "exp", "log", "tanh", "sigmoid", "relu", "gelu", "silu", "square", "sqrt",
             "rsqrt", "sin")
_NL_BINARY = ("add", "subtract", "multiply", "divide", "maximum", "minimum", "greater",
              "greater_equal", "less", "less_equal", "equal", "not_equal")
_NL_INT_BINARY = ("bitwise_and", "bitwise_or", "bitwise_xor", "power")

_LEGACY = {
    # ---------------------------------------------------------------- nisa: elementwise
    "nisa.tensor_tensor": {"data1": "tt_ops", "data2": ("tt_ops", "tt_refused_engine"),
                           "op": "tt_ops", "dtype": "tt_dtype_engine", "mask": "tt_mask",
                           "engine": ("tt_dtype_engine", "tt_refused_engine")},
    "nisa.tensor_scalar": {"data": "ts_two_ops", "op0": "ts_two_ops", "operand0": "ts_two_ops",
                           "reverse0": "ts_two_ops", "op1": "ts_two_ops",
                           "operand1": "ts_two_ops", "reverse1": "ts_two_ops",
                           "dtype": "ts_dtype_engine_mask", "mask": "ts_dtype_engine_mask",
                           "engine": ("ts_dtype_engine_mask", "ts_refused_engine")},
    "nisa.tensor_copy": {"src": "copy_reciprocal", "mask": "copy_reciprocal",
                         "dtype": "copy_reciprocal",
                         "engine": ("copy_reciprocal", "copy_refused_engine")},
    "nisa.reciprocal": {"data": "copy_reciprocal", "dtype": "copy_reciprocal",
                        "mask": "copy_reciprocal"},
    "nisa.activation": {"op": "act_functions", "data": "act_functions",
                        "bias": "act_scale_bias_dtype", "scale": "act_scale_bias_dtype",
                        "reduce_op": ("act_reduce", "act_refused_reduce_op"),
                        "reduce_res": "act_reduce", "reduce_cmd": "act_reduce",
                        "mask": "act_scale_bias_dtype", "dtype": "act_scale_bias_dtype"},
    "nisa.activation_reduce": {"op": "act_reduce", "data": "act_reduce",
                               "reduce_op": ("act_reduce", "act_refused_reduce_op"),
                               "reduce_res": "act_reduce", "bias": "act_reduce",
                               "scale": "act_reduce", "mask": "act_reduce",
                               "dtype": "act_reduce"},
    "nisa.tensor_reduce": {"op": "tensor_reduce", "data": "tensor_reduce",
                           "axis": "tensor_reduce", "mask": "tensor_reduce_mask",
                           "dtype": "tensor_reduce", "negate": ("tensor_reduce",
                                                                "reduce_refused"),
                           "keepdims": "tensor_reduce"},
    "nisa.tensor_scalar_reduce": {"data": "tensor_scalar_reduce",
                                  "op0": "tensor_scalar_reduce",
                                  "operand0": "tensor_scalar_reduce",
                                  "reduce_op": "tensor_scalar_reduce",
                                  "reduce_res": "tensor_scalar_reduce",
                                  "reverse0": "reduce_refused",
                                  "dtype": "tensor_scalar_reduce",
                                  "mask": "tensor_scalar_reduce"},
    # ---------------------------------------------------------------- nisa: movement, creation
    "nisa.dma_copy": {"dst": "dma_copy", "src": "dma_copy", "mask": "dma_copy",
                      "dst_rmw_op": ("dma_copy_indirect", "dma_refused"),
                      "oob_mode": ("dma_copy_indirect", "dma_refused"),
                      "dge_mode": ("dma_copy", "dma_hwdge", "dma_refused")},
    "nisa.dma_transpose": {"src": ("dma_transpose", "dma_transpose_refused"),
                           "axes": ("dma_transpose", "dma_transpose_refused"),
                           "mask": "dma_transpose", "dtype": "dma_transpose",
                           "dge_mode": "dma_transpose_hwdge"},
    "nisa.memset": {"shape": "creation", "value": "creation", "dtype": "creation",
                    "mask": "creation_refused", "engine": ("creation", "creation_refused")},
    "nisa.iota": {"expr": "creation", "dtype": "creation", "mask": "creation_refused"},
    "nisa.affine_select": {"pred": "affine_select", "on_true_tile": "affine_select",
                           "on_false_value": "affine_select", "mask": "affine_select",
                           "dtype": "affine_select"},
    "nisa.nc_transpose": {"data": "transposes", "mask": "transposes", "dtype": "transposes",
                          "engine": "transposes"},
    "nisa.nc_matmul": {"stationary": "matmul", "moving": "matmul",
                       "is_stationary_onezero": "matmul", "is_moving_onezero": "matmul",
                       "is_transpose": "matmul", "tile_position": "matmul",
                       "tile_size": "matmul", "mask": "matmul",
                       "perf_mode": ("matmul", "matmul_refused")},
    # ---------------------------------------------------------------- nisa: special
    "nisa.tensor_copy_predicated": {"src": "copy_predicated", "dst": "copy_predicated",
                                    "predicate": "copy_predicated",
                                    "reverse_pred": "copy_predicated",
                                    "mask": "copy_predicated", "dtype": "copy_predicated"},
    "nisa.select_reduce": {"dst": "select_reduce", "predicate": "select_reduce",
                           "on_true": "select_reduce", "on_false": "select_reduce",
                           "reduce_res": "select_reduce", "reduce_cmd": "select_reduce",
                           "reduce_op": "select_reduce", "reverse_pred": "select_reduce",
                           "mask": "select_reduce", "dtype": "select_reduce"},
    "nisa.range_select": {"on_true_tile": "range_select", "comp_op0": "range_select",
                          "comp_op1": "range_select", "bound0": "range_select",
                          "bound1": "range_select", "reduce_cmd": "range_select",
                          "reduce_res": "range_select", "reduce_op": "range_select",
                          "range_start": "range_select", "on_false_value": "range_select",
                          "mask": "range_select", "dtype": "range_select"},
    "nisa.sequence_bounds": {"segment_ids": "sequence_bounds", "dtype": "sequence_bounds"},
    "nisa.tensor_partition_reduce": {"op": "partition_reduce", "data": "partition_reduce",
                                     "mask": "partition_reduce", "dtype": "partition_reduce"},
    "nisa.tensor_tensor_scan": {"data0": "tensor_tensor_scan", "data1": "tensor_tensor_scan",
                                "initial": "tensor_tensor_scan", "op0": "tensor_tensor_scan",
                                "op1": "tensor_tensor_scan", "reverse0": "tensor_tensor_scan",
                                "reverse1": "tensor_tensor_scan", "dtype": "tensor_tensor_scan",
                                "mask": "tensor_tensor_scan"},
    "nisa.tensor_scalar_cumulative": {"dst": "scalar_cumulative", "src": "scalar_cumulative",
                                      "op0": "scalar_cumulative", "op1": "scalar_cumulative",
                                      "imm0": "scalar_cumulative", "imm1": "scalar_cumulative",
                                      "reduce_cmd": "scalar_cumulative"},
    "nisa.bn_stats": {"data": "bn_stats_aggr", "mask": "bn_stats_aggr",
                      "dtype": "bn_stats_aggr"},
    "nisa.bn_aggr": {"data": "bn_stats_aggr", "mask": "bn_stats_aggr", "dtype": "bn_stats_aggr"},
    "nisa.max8": {"src": "top8", "mask": "top8", "dtype": "top8"},
    "nisa.nc_find_index8": {"data": "top8", "vals": "top8", "mask": "top8", "dtype": "top8"},
    "nisa.nc_match_replace8": {"data": "top8", "vals": "top8", "imm": "top8",
                               "dst_idx": "top8", "mask": "top8", "dtype": "top8"},
    "nisa.local_gather": {"src_buffer": "local_gather", "index": "local_gather",
                          "num_elem_per_idx": "local_gather",
                          "num_valid_indices": "local_gather", "mask": "gathers_refused"},
    "nisa.nc_stream_shuffle": {"src": "stream_shuffle", "dst": "stream_shuffle",
                               "shuffle_mask": "stream_shuffle", "dtype": "stream_shuffle",
                               "mask": "gathers_refused"},
    "nisa.dropout": {"data": "dropout_rand", "prob": "dropout_rand", "mask": "dropout_rand",
                     "dtype": ("dropout_rand", "random_refused")},
    # ---------------------------------------------------------------- nl
    "nl.copy": {"src": "copy_reciprocal", "mask": "copy_reciprocal",
                "dtype": "copy_reciprocal"},
    "nl.reciprocal": {"x": "copy_reciprocal", "dtype": "copy_reciprocal",
                      "mask": "copy_reciprocal"},
    "nl.negative": {"x": "nl_binary_int_mask", "dtype": "nl_binary_int_mask",
                    "mask": "nl_binary_int_mask"},
    "nl.sum": {"x": "tensor_reduce", "axis": "tensor_reduce", "dtype": "tensor_reduce",
               "mask": "tensor_reduce_mask", "keepdims": "tensor_reduce"},
    "nl.max": {"x": "tensor_reduce", "axis": "tensor_reduce", "dtype": "tensor_reduce",
               "mask": "tensor_reduce_mask", "keepdims": "tensor_reduce"},
    "nl.min": {"x": "tensor_reduce", "axis": "tensor_reduce", "dtype": "tensor_reduce",
               "mask": "tensor_reduce_mask", "keepdims": "tensor_reduce"},
    "nl.load": {"src": "load_store", "mask": "load_store", "dtype": "load_store"},
    "nl.store": {"dst": "load_store", "value": "load_store", "mask": "load_store"},
    "nl.load_transpose2d": {"src": "load_store", "mask": "load_transpose2d_mask",
                            "dtype": "load_store"},
    "nl.ndarray": {"shape": "creation", "dtype": "creation", "buffer": "creation",
                   "name": "creation", "lazy_initialization": "creation"},
    "nl.zeros": {"shape": "creation", "dtype": "creation", "buffer": "creation",
                 "name": "creation", "lazy_initialization": "creation"},
    "nl.ones": {"shape": "creation", "dtype": "creation", "buffer": "creation",
                "name": "creation", "lazy_initialization": "creation"},
    "nl.full": {"shape": "creation", "fill_value": "creation", "dtype": "creation",
                "buffer": "creation", "name": "creation", "lazy_initialization": "creation"},
    "nl.empty_like": {"a": "creation", "dtype": "creation", "buffer": "creation",
                      "name": "creation", "lazy_initialization": "creation"},
    "nl.zeros_like": {"a": "creation", "dtype": "creation", "buffer": "creation",
                      "name": "creation", "lazy_initialization": "creation"},
    "nl.broadcast_to": {"src": "broadcast_constants", "shape": "broadcast_constants"},
    "nl.shared_constant": {"constant": "broadcast_constants", "dtype": "broadcast_constants"},
    "nl.shared_identity_matrix": {"n": "broadcast_constants", "dtype": "broadcast_constants"},
    "nl.transpose": {"x": "transposes", "dtype": "transposes", "mask": "transposes"},
    "nl.matmul": {"x": "matmul", "y": "matmul", "transpose_x": "matmul", "mask": "matmul"},
    "nl.arange": {"start": "indexing_loops", "stop": "indexing_loops"},
    "nl.ds": {"start": "indexing_loops", "size": "indexing_loops"},
    "nl.static_range": {"args": "indexing_loops"},
    "nl.program_id": {"axis": "indexing_loops"},
    "nl.num_programs": {"axes": "indexing_loops"},
    "nl.program_ndim": {},
    "nl.device_print": {"prefix": "indexing_loops", "x": "indexing_loops",
                        "mask": "indexing_loops"},
    "nl.gather_flattened": {"data": "gather_flattened", "indices": "gather_flattened",
                            "mask": "gathers_refused", "dtype": "gather_flattened"},
    "nl.rand": {"shape": "dropout_rand", "dtype": "dropout_rand"},
    "nl.dropout": {"x": "dropout_rand", "rate": "dropout_rand", "dtype": "dropout_rand",
                   "mask": "dropout_rand"},
    "nl.random_seed": {"seed": "random_refused", "mask": "random_refused"},
    # ---------------------------------------------------------------- ncc
    "ncc.skip_middle_end_transformations": {"func": "compiler_alloc"},
    "ncc.force_auto_alloc": {"func": "compiler_alloc"},
    "ncc.enable_stack_allocator": {"func": "compiler_alloc", "log_level": "compiler_alloc"},
    "ncc.disable_stack_allocator": {"func": "compiler_alloc"},
    "ncc.no_reorder": {},
    "ncc.sbuf.mod_alloc": {"base_addr": "compiler_alloc", "num_free_tiles": "compiler_alloc",
                           "base_partition": "compiler_refused",
                           "num_par_tiles": "compiler_refused"},
    "ncc.sbuf.alloc": {"func": "compiler_alloc"},
    "ncc.psum.mod_alloc": {"base_bank": "compiler_alloc", "num_bank_tiles": "compiler_alloc",
                           "base_addr": "compiler_refused", "base_partition": "compiler_refused",
                           "num_par_tiles": "compiler_refused",
                           "num_free_tiles": "compiler_refused"},
    "ncc.psum.alloc": {"func": "compiler_alloc"},
}
for _f in _NL_UNARY:
    _LEGACY["nl." + _f] = {"x": "act_functions", "dtype": "act_functions",
                           "mask": "act_functions"}
for _f in _NL_BINARY:
    _LEGACY["nl." + _f] = {"x": "nl_binary", "y": "nl_binary", "dtype": "nl_binary",
                           "mask": "nl_binary"}
for _f in _NL_INT_BINARY:
    _LEGACY["nl." + _f] = {"x": "nl_binary_int_mask", "y": "nl_binary_int_mask",
                           "dtype": "nl_binary_int_mask", "mask": "nl_binary_int_mask"}

_NKI = {
    # ---------------------------------------------------------------- nisa (destination first)
    "nisa.tensor_tensor": dict.fromkeys(("dst", "data1", "data2", "engine", "name"),
                                        "nki_tensor_tensor"),
    "nisa.tensor_scalar": dict(
        dict.fromkeys(("dst", "data", "name"), "nki_tensor_scalar"),
        **dict.fromkeys(("op0", "operand0", "op1", "engine"),
                        ("nki_tensor_scalar", "nkc_unary_alu", "nkc_unary_refused")),
        reverse0=("nki_tensor_scalar", "nkc_unary_refused"),
        operand1=("nki_tensor_scalar", "nkc_unary_alu"),
        reverse1=("nki_tensor_scalar", "nkc_unary_alu")),
    "nisa.tensor_copy": dict.fromkeys(("dst", "src", "engine", "name"), "nki_copy_reciprocal"),
    "nisa.reciprocal": dict.fromkeys(("dst", "data", "name"), "nki_copy_reciprocal"),
    "nisa.activation": dict.fromkeys(("dst", "op", "data", "bias", "scale", "reduce_res",
                                      "reduce_cmd", "name"), "nki_activation"),
    "nisa.activation_reduce": dict.fromkeys(("dst", "op", "data", "reduce_res", "bias", "scale",
                                             "name"), "nki_activation"),
    "nisa.tensor_reduce": dict.fromkeys(("dst", "op", "data", "axis", "negate", "keepdims",
                                         "name"), "nki_tensor_reduce"),
    "nisa.memset": dict.fromkeys(("dst", "value", "engine", "name"), "nki_memset"),
    "nisa.dma_copy": {"dst": "nki_dma_copy", "src": "nki_dma_copy", "priority": "nki_refused",
                      "oob_mode": "nki_refused", "dge_mode": ("nki_dma_copy", "nki_dma_hwdge"),
                      "engine": "nki_dma_hwdge", "name": "nki_dma_copy"},
    "nisa.nc_matmul": dict(dict.fromkeys(("dst", "stationary", "moving", "is_stationary_onezero",
                                          "is_moving_onezero", "accumulate", "tile_position",
                                          "tile_size", "name"), "nki_matmul"),
                           is_transpose=("nki_matmul", "nki_matmul_transpose_mode")),
    "nisa.nc_transpose": dict.fromkeys(("dst", "data", "engine", "name"), "nki_transpose"),
    "nisa.iota": dict.fromkeys(("dst", "pattern", "offset", "channel_multiplier", "name"),
                               "nki_patterns"),
    "nisa.affine_select": dict.fromkeys(("dst", "pattern", "channel_multiplier", "on_true_tile",
                                         "on_false_value", "cmp_op", "offset", "name"),
                                        "nki_patterns"),
    "nisa.dma_transpose": {"dst": "nki_dma_transpose_compute",
                           "src": "nki_dma_transpose_compute",
                           "axes": "nki_dma_transpose_compute",
                           "priority": "nki_refused", "dge_mode": "nki_dma_transpose_hwdge",
                           "oob_mode": "nki_refused", "name": "nki_dma_transpose_compute"},
    "nisa.dma_compute": {"dst": "nki_dma_transpose_compute",
                         "srcs": "nki_dma_transpose_compute",
                         "reduce_op": "nki_dma_transpose_compute",
                         "scales": "nki_dma_transpose_compute", "unique_indices": "nki_refused",
                         "oob_mode": "nki_refused", "name": "nki_dma_transpose_compute"},
    # refused as whole calls (the model has no run-time scalar state): every argument
    "nisa.register_alloc": {"x": "nki_registers"},
    "nisa.register_move": dict.fromkeys(("dst", "src"), "nki_registers"),
    "nisa.register_load": dict.fromkeys(("dst", "src"), "nki_registers"),
    "nisa.register_store": dict.fromkeys(("dst", "src"), "nki_registers"),
    "nisa.get_nc_version": {},  # no arguments: nki_versions
    "nisa.get_nc_sub_version": {},  # no arguments: refused as a whole in nki_refused
    # ---------------------------------------------------------------- nisa: compute (0.6)
    "nisa.scalar_tensor_tensor": dict.fromkeys(("dst", "data", "op0", "operand0", "op1",
                                                "operand1", "reverse0", "reverse1", "name"),
                                               "nkc_arith"),
    "nisa.tensor_scalar_reduce": dict(
        dict.fromkeys(("dst", "data", "reduce_op", "reduce_res", "reduce_res_negate", "name"),
                      "nkc_arith"),
        **dict.fromkeys(("op0", "operand0"), ("nkc_arith", "nkc_unary_alu", "nkc_unary_refused")),
        reverse0="nkc_refused", reduce_cmd="nkc_refused", reduce_init="nkc_refused"),
    "nisa.tensor_copy_predicated": dict.fromkeys(("dst", "src", "predicate", "reverse_pred",
                                                  "name"), "nkc_arith"),
    "nisa.tensor_tensor_scan": dict.fromkeys(("dst", "data0", "data1", "initial", "op0", "op1",
                                              "reverse0", "reverse1", "name"), "nkc_scans"),
    "nisa.tensor_scalar_cumulative": dict.fromkeys(("dst", "src", "op0", "op1", "imm0", "imm1",
                                                    "reduce_cmd", "name"), "nkc_scans"),
    "nisa.bn_stats": dict.fromkeys(("dst", "data", "name"), "nkc_stats"),
    "nisa.bn_aggr": dict.fromkeys(("dst", "data", "name"), "nkc_stats"),
    "nisa.tensor_partition_reduce": {"dst": "nkc_stats", "op": ("nkc_stats", "nkc_refused"),
                                     "data": "nkc_stats", "name": "nkc_stats"},
    "nisa.max8": dict.fromkeys(("dst", "src", "name"), "nkc_top8"),
    "nisa.nc_find_index8": dict.fromkeys(("dst", "data", "vals", "name"), "nkc_top8"),
    "nisa.nc_match_replace8": dict.fromkeys(("dst", "data", "vals", "imm", "dst_idx", "name"),
                                            "nkc_top8"),
    "nisa.local_gather": dict.fromkeys(("dst", "src_buffer", "index", "num_elem_per_idx",
                                        "num_valid_indices", "name"), "nkc_local_gather"),
    "nisa.sequence_bounds": dict.fromkeys(("dst", "segment_ids", "name"), "nkc_sequence_bounds"),
    "nisa.nc_n_gather": dict.fromkeys(("dst", "data", "indices", "name"), "nkc_gathers"),
    "nisa.nc_stream_shuffle": dict.fromkeys(("dst", "src", "shuffle_mask", "name"),
                                            "nkc_gathers"),
    "nisa.select_reduce": dict.fromkeys(("dst", "predicate", "on_true", "on_false",
                                         "reduce_res", "reduce_cmd", "reduce_op",
                                         "reverse_pred", "name"), "nkc_selects"),
    "nisa.range_select": dict(
        dict.fromkeys(("dst", "on_true_tile", "comp_op0", "comp_op1", "bound0", "bound1",
                       "reduce_cmd", "reduce_res", "reduce_op", "range_start", "name"),
                      "nkc_selects"),
        on_false_value="nkc_refused"),
    "nisa.dropout": dict.fromkeys(("dst", "data", "prob", "name"), "nkc_dropout"),
    # MX (nki_mx_test.py)
    "nisa.quantize_mx": dict.fromkeys(("dst", "src", "dst_scale", "name"), "nkc_mx"),
    "nisa.nc_matmul_mx": dict.fromkeys(("dst", "stationary", "moving", "stationary_scale",
                                        "moving_scale", "tile_position", "tile_size",
                                        "accumulate", "name"), "nkc_mx"),
    "nisa.exponential": {"dst": "nkc_gen4", "src": "nkc_gen4", "max_value": "nkc_gen4",
                         "name": "nkc_gen4", "reduce_res": "nkc_refused",
                         "reduce_cmd": "nkc_refused", "reduce_init": "nkc_refused"},
    "nisa.activate2": dict(
        dict.fromkeys(("dst", "op", "data", "imm0", "imm1", "op0", "op1", "reverse0",
                       "reverse1", "reduce_res", "reduce_cmd", "name"), "nkc_gen4"),
        reduce_op=("nkc_gen4", "nkc_refused"), relu_param="nkc_refused"),
    # refused as whole calls (random state, data-dependent sizes, collectives):
    # every argument, by nkc_unmodelled
    **{c: dict.fromkeys(a, "nkc_unmodelled") for c, a in (
        ("nisa.rng", ("dst", "engine", "name")),
        ("nisa.rand2", ("dst", "min", "max", "name")),
        ("nisa.rand_get_state", ("dst", "engine", "name")),
        ("nisa.rand_set_state", ("src_seeds", "engine", "name")),
        ("nisa.set_rng_seed", ("src_seeds", "name")),
        ("nisa.nonzero_with_count", ("dst", "src", "index_offset", "padding_val", "name")),
        ("nisa.topk", ("val_dst", "idx_dst", "src", "n", "name")),
        ("nisa.core_barrier", ("data", "cores", "engine", "name")))},
    # the exchange between the two cores of an LNC2 launch (nki_sendrecv_test.py)
    "nisa.sendrecv": dict(dict.fromkeys(("src", "dst", "send_to_rank", "recv_from_rank",
                                         "pipe_id", "dma_engine", "name"), "nks_exchange"),
                          name=("nks_exchange", "nks_refused")),
    # ---------------------------------------------------------------- nl
    "nl.broadcast_to": dict.fromkeys(("x", "shape", "dtype"), "nkl_matmul_transpose"),
    "nl.transpose": dict.fromkeys(("x", "dtype"), "nkl_matmul_transpose"),
    "nl.matmul": {"x": "nkl_matmul_transpose", "y": "nkl_matmul_transpose",
                  "transpose_x": "nkl_matmul_transpose"},
    "nl.invert": dict.fromkeys(("x", "dtype"), "nkl_integer"),
    "nl.logical_not": dict.fromkeys(("x", "dtype"), "nkl_integer"),
    "nl.load": dict.fromkeys(("src", "dtype"), "nkl_memory"),
    "nl.load_transpose2d": dict.fromkeys(("src", "dtype"), "nkl_memory"),
    "nl.store": dict.fromkeys(("dst", "value"), "nkl_memory"),
    "nl.gather_flattened": {"data": "nkl_memory", "indices": "nkl_memory", "axis": "nkl_refused",
                            "dtype": "nkl_memory"},
    "nl.device_print": dict.fromkeys(("print_prefix", "tensor"), "nkl_memory"),
    "nl.ndarray": {"shape": "nkl_creation", "dtype": "nkl_creation", "buffer": "nkl_creation",
                   "name": "nkl_creation", "address": "nkl_address"},
    "nl.zeros": dict.fromkeys(("shape", "dtype", "buffer", "name"), "nkl_creation"),
    "nl.ones": dict.fromkeys(("shape", "dtype", "buffer", "name"), "nkl_creation"),
    "nl.full": dict.fromkeys(("shape", "fill_value", "dtype", "buffer", "name"), "nkl_creation"),
    "nl.par_dim": {"size": "nkl_par_dim"},
    "nl.zeros_like": dict.fromkeys(("x", "dtype", "buffer", "name"), "nkl_creation"),
    "nl.empty_like": dict.fromkeys(("x", "dtype", "buffer", "name"), "nkl_creation"),
    "nl.shared_constant": {"constant": "nkl_creation"},
    "nl.shared_identity_matrix": dict.fromkeys(("n", "dtype", "dst"), "nkl_creation"),
    "nl.rand": {"shape": "nkl_random_launch", "dtype": "nkl_random_launch",
                "buffer": "nkl_refused", "name": "nkl_random_launch"},
    "nl.dropout": dict.fromkeys(("x", "rate", "dtype"), "nkl_random_launch"),
    "nl.random_seed": {"seed": "nkl_refused"},
    "nl.program_id": {"axis": "nkl_random_launch"},
    "nl.num_programs": {"axes": "nkl_random_launch"},
    "nl.no_reorder": {},  # no arguments: nkl_random_launch
}
_NKI["nisa.tensor_copy"]["dtype"] = ("nki_copy_reciprocal", "nki_refused")
_NKI["nisa.tensor_tensor"]["op"] = ("nki_tensor_tensor", "nki_refused", "nkc_unary_refused")
_NKI["nisa.scalar_tensor_tensor"]["op0"] = ("nkc_arith", "nkc_unary_refused")
_NKI["nisa.activation"]["reduce_op"] = ("nki_activation", "nki_refused")
_NKI["nisa.activation_reduce"]["reduce_op"] = ("nki_activation", "nki_refused")
_NKI["nisa.nc_matmul"]["perf_mode"] = "nki_refused"
for _f in ("abs", "exp", "log", "tanh", "sigmoid", "relu", "gelu", "silu", "square", "sqrt",
           "rsqrt", "sin", "negative", "copy", "reciprocal"):
    _NKI["nl." + _f] = dict.fromkeys(("x", "dtype"), "nkl_unary")
for _f in ("add", "subtract", "multiply", "maximum", "minimum", "equal", "not_equal", "greater",
           "greater_equal", "less", "less_equal", "power"):
    _NKI["nl." + _f] = dict.fromkeys(("x", "y", "dtype"), "nkl_binary")
for _f in ("bitwise_and", "bitwise_or", "bitwise_xor", "left_shift", "right_shift"):
    _NKI["nl." + _f] = dict.fromkeys(("x", "y", "dtype"), "nkl_integer")
for _f in ("sum", "max", "min", "prod"):
    _NKI["nl." + _f] = dict.fromkeys(("x", "axis", "dtype", "keepdims"), "nkl_reductions")

TABLE = {"neuronxcc": _LEGACY, "nki": _NKI}

# Facade names (allowlist.NKI_API) that are calls the front end refuses as a whole: each is
# called in a kernel by the case `unsupported_calls` and must be refused at that line naming it.
UNSUPPORTED = {
    "neuronxcc": {
        "neuronxcc.nki.isa": ("builtin", "core_barrier", "exponential", "iota_partition",
                              "nc_matmul_mx", "quantize_mx", "rand2", "rng",
                              "scalar_tensor_tensor", "sendrecv", "tensor_copy_dynamic_dst",
                              "tensor_copy_dynamic_src"),
        "neuronxcc.nki.language": ("load_transpose", "expand_dims", "atomic_rmw", "cos", "tan",
                                   "arctan", "erf", "sign", "ceil", "floor", "trunc",
                                   "logical_and", "logical_or", "invert", "where", "select",
                                   "mean", "var", "all_reduce", "softmax", "layer_norm",
                                   "rms_norm"),
    },
    "nki": {
        "nki.language": ("divide", "logical_and", "logical_or", "logical_xor", "abs_max",
                         "abs_min", "average", "fmod", "mod", "cos", "tan", "arctan", "sign",
                         "ceil", "floor", "trunc", "prelu", "gelu_dx", "gelu_apprx_tanh",
                         "gelu_apprx_sigmoid", "gelu_apprx_sigmoid_dx", "silu_dx", "softplus",
                         "mish", "erf", "erf_dx", "mean", "var", "all", "softmax", "rms_norm",
                         "where"),
        "nki.collectives": ("ReplicaGroup", "all_reduce", "all_gather", "all_gather_v",
                            "reduce_scatter", "all_to_all", "all_to_all_v",
                            "collective_permute", "collective_permute_implicit",
                            "collective_permute_implicit_reduce",
                            "collective_permute_implicit_current_processing_rank_id",
                            "rank_id"),
    },
}

# The other facade names: not calls of the traced kernel (constants, dtypes, enums, modules,
# decorators and the simulator's entry points), or calls that are not `@api`-registered, each
# with the case that uses it or why it needs none.
OTHER = {
    "neuronxcc": {
        "neuronxcc": {"nki": "module"},
        "neuronxcc.nki": {
            "jit": "the decorator of every case's kernel", "baremetal": "a decorator (as jit)",
            "benchmark": "a decorator (as jit)", "profile": "a decorator (as jit)",
            "trace": "a decorator (as jit)", "simulate_kernel": "a simulator entry point",
            "simulate": "a simulator entry point", "language": "module", "isa": "module",
            "compiler": "module", "typing": "module"},
        "neuronxcc.nki.language": {
            "sbuf": "creation", "psum": "creation", "hbm": "a buffer (HBM scratch)",
            "private_hbm": "a buffer (HBM scratch)", "shared_hbm": "every case's outputs",
            "par_dim": "compiler_alloc", "tile_size": "constants of the ISA's sizes",
            "bfloat16": "dtype", "bool_": "dtype", "float16": "dtype", "float32": "dtype",
            "float8_e4m3": "dtype", "float8_e5m2": "dtype", "fp16": "dtype limits",
            "fp32": "range_select", "int32": "dtype", "tfloat32": "dtype", "uint16": "dtype",
            "uint32": "dtype", "uint8": "dtype",
            "mgrid": "the masks of every mask case", "affine_range": "indexing_loops",
            "sequential_range": "indexing_loops", "spmd_dim": "a launch-grid axis (launch.py)",
            "nc": "a launch-grid axis (launch.py)"},
        "neuronxcc.nki.isa": {
            "dge_mode": "dma_copy", "engine": "an enum (its members: the *_engine cases)",
            "gpsimd_engine": "tt_dtype_engine", "scalar_engine": "ts_dtype_engine_mask",
            "tensor_engine": "transposes", "unknown_engine": "the default engine",
            "vector_engine": "tt_dtype_engine", "oob_mode": "dma_copy_indirect",
            "reduce_cmd": "act_reduce",
            "constants": "module (dge_mode, oob_mode); absent from the stand-in: refused"},
        "neuronxcc.nki.compiler": {"sbuf": "compiler_alloc", "psum": "compiler_alloc"},
        "neuronxcc.nki.typing": {"tensor": "annotation", "mutable_tensor": "annotation",
                                 "scalar": "annotation"},
        "neuronxcc.nki.isa.constants": {"dge_mode": "dma_copy", "oob_mode": "dma_copy_indirect"},
    },
    "nki": {
        "nki": {"jit": "the decorator of every case's kernel", "simulate": "a simulator entry "
                "point", "language": "module", "isa": "module", "collectives": "module (every call refused)",
                "typing": "module", "dtype": "module"},
        "nki.dtype": dict.fromkeys(
            ("bfloat16", "bool_", "float16", "float32", "float8_e4m3", "float8_e4m3fn",
             "float8_e5m2", "float8_e4m3fn_x4", "float8_e5m2_x4", "float4_e2m1fn_x4",
             "float8_e8m0fnu", "int8", "int16", "int32", "tfloat32", "uint8", "uint16",
             "uint32"), "dtype (the e8m0, int8 and int16 ones refused where used; the x4 ones: "
                       "nkc_mx)"),
        "nki.language": dict(
            dict.fromkeys(("bfloat16", "bool_", "bool", "float16", "float32", "float8_e4m3",
                           "float8_e4m3fn", "float8_e5m2", "float8_e4m3fn_x4", "float8_e5m2_x4",
                           "float4_e2m1fn_x4", "float8_e8m0fnu", "int8", "int16", "int32",
                           "tfloat32", "uint8", "uint16", "uint32"), "dtype"),
            sbuf="nkl_creation", psum="nki_matmul", hbm="a buffer (HBM scratch)",
            private_hbm="a buffer (HBM scratch)", shared_hbm="every case's outputs",
            is_hbm="a predicate on buffers (no instruction)",
            is_on_chip="a predicate on buffers (no instruction)",
            is_psum="a predicate on buffers (no instruction)",
            is_sbuf="a predicate on buffers (no instruction)",
            tile_size="constants of the ISA's sizes", NKIObject="a base class for configs",
            ds="the legacy nl.ds (same signature; indexing_loops), nkl_random_launch",
            affine_range="a Python loop (newapi/loops.py; frontend_loops_test.cpp)",
            sequential_range="a Python loop (newapi/loops.py; frontend_loops_test.cpp)",
            static_range="a Python loop (newapi/loops.py; frontend_loops_test.cpp)",
            fori_loop="an on-device loop (newapi/loops.py; frontend_loops_test.cpp)",
            dynamic_range="an on-device loop (newapi/loops.py; frontend_loops_test.cpp)",
            while_loop="refused, no registers (newapi/loops.py; frontend_loops_test.cpp)",
            program_ndim="the legacy nl.program_ndim (indexing_loops)",
            bypass="an operator name for tensor_scalar (no call)"),
        "nki.isa": dict(
            engine="nki_tensor_tensor", reduce_cmd="nki_activation", dge_mode="nki_dma_copy",
            oob_mode="nki_refused", matmul_perf_mode="nki_refused", nc_version="nki_versions",
            dma_engine="an enum of sendrecv (nks_exchange)", tensor_engine="deprecated engine",
            vector_engine="deprecated engine", scalar_engine="deprecated engine",
            gpsimd_engine="deprecated engine", unknown_engine="deprecated engine",
            constants="module"),
        "nki.isa.constants": dict.fromkeys(("dge_mode", "oob_mode", "matmul_perf_mode",
                                            "engine", "reduce_cmd", "nc_version",
                                            "dma_engine"), "the nki.isa enums"),
        "nki.typing": dict.fromkeys(("tensor", "mutable_tensor", "scalar"), "annotation"),
    },
}


def claims_of(case):
    """The (dialect, call, argument) triples TABLE assigns to `case`."""
    out = []
    for dialect, calls in TABLE.items():
        for call, args in calls.items():
            for arg, cases in args.items():
                if case in ((cases,) if isinstance(cases, str) else cases):
                    out.append((dialect, call, arg))
    return out
