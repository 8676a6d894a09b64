// The interpreter: setup, lockstep walking of the cores, lifetimes and poison, access
// resolution and the shadow checks. Per-instruction rules and execution: interpreter_ops.cpp.
#include <algorithm>
#include <cstring>

#include "model/interpreter_impl.h"
#include "model/text_form.h"

namespace ncv {

namespace {

// a * b for a size of the named tensor (the message is built only on overflow).
int64_t mul_checked(int64_t a, int64_t b, const std::string& tensor) {
  int64_t r;
  if (__builtin_mul_overflow(a, b, &r)) {
    throw InputError("tensor '" + tensor + "' overflows 64-bit sizes");
  }
  return r;
}

Env param_env(const ParamValues& params) {
  Env env;
  for (const auto& [name, value] : params) env.set(name, value);
  return env;
}

int64_t hbm_bytes_of(const Program& p, const std::vector<std::vector<int64_t>>& shapes) {
  int64_t total = 0;
  for (const Tensor& t : p.tensors) {
    if (t.on_chip()) continue;
    int64_t n = static_cast<int64_t>(dtype_size(t.dtype));
    for (int64_t d : shapes[t.id]) {
      n = mul_checked(n, d, t.name);
    }
    if (__builtin_add_overflow(total, n, &total)) throw InputError("HBM size overflows");
  }
  return total;
}

}  // namespace

int64_t hbm_bytes(const Program& p, const ParamValues& params) {
  return hbm_bytes_of(p, concrete_shapes(p, params));
}

RunResult run_program(const Program& p, const ParamValues& params,
                      const std::map<std::string, HostTensor>& inputs, const RunOptions& options) {
  interp::Interp in(p, params, inputs, options);
  return in.run();
}

namespace interp {

Interp::Interp(const Program& p, const ParamValues& params,
               const std::map<std::string, HostTensor>& inputs, const RunOptions& opts)
    : p_(p),
      params_(params),
      inputs_(inputs),
      opts_(opts),
      hw_(opts.hw ? *opts.hw : hw_config_trn1()) {}

void Interp::fail(CheckKind k, std::string detail) {
  throw CheckFailure{k, std::move(detail)};
}

RunResult Interp::run() {
  check_params(p_, params_);
  if (p_.tensors.size() >= 65535) throw InputError("more than 65534 tensors in one kernel");
  param_env_ = param_env(params_);
  try {
    grid_ = eval(p_.grid, param_env_);
  } catch (const EvalError& e) {
    throw InputError("grid of kernel '" + p_.name + "' cannot be evaluated: " + e.message);
  }
  if (grid_ < 1 || grid_ > 64) {
    throw InputError("grid of kernel '" + p_.name + "' is " + std::to_string(grid_) +
                     "; the model runs 1 to 64 program instances");
  }
  shapes_ = concrete_shapes(p_, params_);
  for (const Tensor& t : p_.tensors) {
    const auto& s = shapes_[t.id];
    std::vector<int64_t> es(s.size(), 1);
    for (int d = static_cast<int>(s.size()) - 2; d >= 0; --d) {
      es[d] = mul_checked(es[d + 1], s[d + 1], t.name);
    }
    estrides_.push_back(std::move(es));
  }
  alloc_ = allocate(p_, hw_);
  scope_buffers_.assign(p_.num_scopes, {});
  for (const Tensor& t : p_.tensors) {
    if (t.kind == TensorKind::Buffer) scope_buffers_.at(t.scope).push_back(t.id);
  }
  try {
    setup_memory();
    load_inputs(inputs_);
    frames_.assign(grid_, {});
    std::vector<const InstrStmt*> next(grid_, nullptr);
    for (int c = 0; c < grid_; ++c) {
      cores_[c].env = param_env_;
      cores_[c].env.set(kProgramIdParam, c);
      frames_[c].push_back(Frame{&p_.body, 0, nullptr, 0, 0, 0});
      current_core_ = c;
      enter_scope(c, 0, p_.body);
      next[c] = advance(c);
    }
    for (;;) {
      bool any = false;
      for (int c = 0; c < grid_; ++c) {
        if (!next[c]) continue;
        any = true;
        execute(c, *next[c]);
      }
      if (!any) break;
      for (int c = 0; c < grid_; ++c) {
        if (next[c]) next[c] = advance(c);
      }
    }
    current_ = nullptr;
    if (opts_.compute_values) {
      for (const Tensor& t : p_.tensors) {
        if (t.kind != TensorKind::Output) continue;
        const int64_t dsize = static_cast<int64_t>(dtype_size(t.dtype));
        const auto gaps =
            hbm_[t.id].shadow.unwritten(0, static_cast<int64_t>(hbm_[t.id].bytes.size()));
        if (gaps.count > 0) {
          int64_t missing = gaps.count / dsize;
          int64_t first = gaps.first / dsize;
          fail(CheckKind::output_not_written,
               "output '" + t.name + "' has " + std::to_string(missing) +
                   " element(s) never written (first at flat index " + std::to_string(first) + ")");
        }
      }
    }
  } catch (const CheckFailure& f) {
    DynamicError e;
    e.kind = f.kind;
    e.kernel = p_.name;
    e.core = current_core_;
    if (current_) {
      e.instruction = current_->id;
      try {
        e.instruction_text = print_instruction(p_, current_->ins);
      } catch (...) {
        e.instruction_text = std::string(op_name(current_->ins));
      }
    }
    if (current_core_ < static_cast<int>(frames_.size())) {
      for (const Frame& fr : frames_[current_core_]) {
        if (fr.loop) e.loop_indices.emplace_back(fr.loop->var, fr.value);
      }
    }
    for (const auto& kv : params_) e.params.emplace_back(kv.first, kv.second);
    e.detail = f.detail;
    e.build_message();
    result_.error = std::move(e);
  } catch (const EvalError& ev) {
    // An index expression overflowed int64 for these params.
    DynamicError e;
    e.kind = CheckKind::out_of_bounds;
    e.kernel = p_.name;
    e.detail = "index arithmetic overflow: " + ev.message;
    if (current_) e.instruction = current_->id;
    e.build_message();
    result_.error = std::move(e);
  }
  if (opts_.compute_values && !result_.error) {
    for (const Tensor& t : p_.tensors) {
      if (t.kind != TensorKind::Output) continue;
      HostTensor h;
      h.dtype = t.dtype;
      h.shape = shapes_[t.id];
      h.bytes = std::move(hbm_[t.id].bytes);
      result_.outputs.emplace(t.name, std::move(h));
    }
  }
  return std::move(result_);
}

void Interp::setup_memory() {
  Env env = param_env_;
  env.set(kProgramIdParam, 0);
  int64_t sbuf_peak = eval(alloc_.sbuf_peak_bytes, env);
  int64_t psum_peak = eval(alloc_.psum_peak_bytes, env);
  int64_t sbuf_cap = hw_.sbuf_usable_bytes_per_partition();
  int64_t psum_cap = hw_.psum_bytes_per_partition;
  for (const Tensor& t : p_.tensors) {
    if (t.on_chip() && shapes_[t.id][0] > hw_.partitions) {
      fail(CheckKind::partition_rule, "buffer '" + t.name + "' has " +
                                          std::to_string(shapes_[t.id][0]) + " partitions; " +
                                          hw_.name + " has " + std::to_string(hw_.partitions));
    }
  }
  if (sbuf_peak > sbuf_cap) {
    fail(CheckKind::capacity, "live SBUF buffers need " + std::to_string(sbuf_peak) +
                                  " bytes per partition at their peak; " + hw_.name + " has " +
                                  std::to_string(sbuf_cap) + " usable");
  }
  if (psum_peak > psum_cap) {
    fail(CheckKind::capacity, "live PSUM buffers need " + std::to_string(psum_peak) +
                                  " bytes per partition at their peak; " + hw_.name + " has " +
                                  std::to_string(psum_cap));
  }
  bool any_explicit = std::any_of(p_.tensors.begin(), p_.tensors.end(),
                                  [](const Tensor& t) { return t.placement.has_value(); });
  sbuf_stride_ = any_explicit ? sbuf_cap : std::max<int64_t>(sbuf_peak, 4);
  // PSUM like SBUF: the allocator's peak bounds every allocated byte offset, so the arrays need
  // no more (filling the whole 2 MiB PSUM per run dominated short runs, fuzz_program).
  psum_stride_ = any_explicit ? psum_cap : std::max<int64_t>(psum_peak, 4);
  int64_t hbm = hbm_bytes_of(p_, shapes_);
  // Values of SBUF and PSUM per core and of HBM (the shadow maps are small).
  int64_t onchip = (sbuf_stride_ + psum_stride_) * hw_.partitions * grid_;
  int64_t need = opts_.compute_values ? hbm + onchip : 0;
  if (need > opts_.memory_budget_bytes) {
    throw InputError("this run needs about " + std::to_string(need >> 20) +
                     " MiB of host memory, over the budget of " +
                     std::to_string(opts_.memory_budget_bytes >> 20) + " MiB (kernel '" + p_.name +
                     "'; smaller params or a larger budget)");
  }
  cores_.resize(grid_);
  live_.assign(p_.tensors.size() * grid_, 0);
  hbm_.resize(p_.tensors.size());
  for (auto& c : cores_) c.scope_iteration.assign(p_.num_scopes, 0);
  if (!opts_.compute_values) return;
  lifetimes_.assign(1, Lifetime{});
  iterations_.assign(1, AffineIteration{});
  for (auto& c : cores_) {
    // Poison (NaN for floats): reads of unwritten bytes fail the shadow check before any value is
    // used, so this only keeps stale host memory out of the arrays. Applied lazily, as accesses
    // resolve (host_memory.h).
    const auto rows = static_cast<size_t>(hw_.partitions);
    c.sbuf = HostMemory(rows, static_cast<size_t>(sbuf_stride_), 0xFF);
    c.psum = HostMemory(rows, static_cast<size_t>(psum_stride_), 0xFF);
    c.sbuf_shadow = ShadowMap(hw_.partitions);
    c.psum_shadow = ShadowMap(hw_.partitions);
    c.sbuf_writer = ShadowMap(hw_.partitions);
    c.psum_writer = ShadowMap(hw_.partitions);
    c.stamp.assign(p_.tensors.size(), 0);
    c.act_regs.assign(static_cast<size_t>(hw_.partitions), 0.0f);
  }
  for (const Tensor& t : p_.tensors) {
    if (t.on_chip()) continue;
    int64_t n = static_cast<int64_t>(dtype_size(t.dtype));
    for (int64_t d : shapes_[t.id]) n *= d;
    HbmState& h = hbm_[t.id];
    h.bytes.assign(static_cast<size_t>(n), 0xFF);
    h.stamp = new_lifetime(t.id);
    if (t.kind == TensorKind::Input && n > 0) h.shadow.write(0, 1, {{0, n}}, h.stamp);
  }
}

void Interp::load_inputs(const std::map<std::string, HostTensor>& inputs) {
  for (const auto& [name, h] : inputs) {
    auto id = p_.find_tensor(name);
    if (!id || p_.tensor(*id).kind != TensorKind::Input) {
      throw InputError("input '" + name + "' is not an input of kernel '" + p_.name + "'");
    }
  }
  for (const Tensor& t : p_.tensors) {
    if (t.kind != TensorKind::Input) continue;
    auto it = inputs.find(t.name);
    if (it == inputs.end()) {
      if (!opts_.compute_values) continue;  // trace-only runs need no values
      throw InputError("input '" + t.name + "' was not given");
    }
    const HostTensor& h = it->second;
    if (h.dtype != t.dtype) {
      throw InputError("input '" + t.name + "' has dtype " + std::string(dtype_name(h.dtype)) +
                       ", kernel expects " + std::string(dtype_name(t.dtype)));
    }
    if (h.shape != shapes_[t.id]) {
      auto fmt = [](const std::vector<int64_t>& s) {
        std::string r = "[";
        for (size_t i = 0; i < s.size(); ++i) r += (i ? ", " : "") + std::to_string(s[i]);
        return r + "]";
      };
      throw InputError("input '" + t.name + "' has shape " + fmt(h.shape) + ", kernel expects " +
                       fmt(shapes_[t.id]));
    }
    if (h.bytes.size() != static_cast<size_t>(h.num_elements()) * dtype_size(h.dtype)) {
      throw InputError("input '" + t.name + "' has a byte size that does not match its shape");
    }
    if (t.value_range) {
      for (int64_t i = 0; i < h.num_elements(); ++i) {
        uint32_t b = h.bits(i);
        int64_t v = t.dtype == DType::int32 ? static_cast<int64_t>(static_cast<int32_t>(b))
                                            : static_cast<int64_t>(b);
        if (v < t.value_range->lo || v > t.value_range->hi) {
          throw InputError("input '" + t.name + "' element " + std::to_string(i) + " = " +
                           std::to_string(v) + " is outside its declared range [" +
                           std::to_string(t.value_range->lo) + ", " +
                           std::to_string(t.value_range->hi) + "]");
        }
      }
    }
    if (opts_.compute_values) hbm_[t.id].bytes = h.bytes;
  }
}

void Interp::count_step() {
  if (++steps_ > opts_.max_steps) {
    throw InputError("kernel '" + p_.name + "' takes more than " + std::to_string(opts_.max_steps) +
                     " loop iterations and instruction instances with these params (step budget)");
  }
}

const InstrStmt* Interp::advance(int core) {
  auto& frames = frames_[core];
  CoreState& cs = cores_[core];
  current_core_ = core;
  current_ = nullptr;
  while (!frames.empty()) {
    Frame& f = frames.back();
    if (f.next < f.body->size()) {
      const Stmt& s = (*f.body)[f.next++];
      if (auto* i = std::get_if<InstrStmt>(&s.node)) {
        count_step();
        return i;
      }
      if (auto* l = std::get_if<Loop>(&s.node)) {
        int64_t start = eval(l->start, cs.env), stop = eval(l->stop, cs.env);
        if (start >= stop) continue;
        count_step();
        SymbolId v = intern_symbol(l->var);
        cs.env.set(v, start);
        cs.scope_iteration.at(l->scope) = 0;
        Frame nf{&l->body, 0, l, start, stop, 0, v};
        nf.serial = nf.outer_serial = f.serial;
        if (l->kind == LoopKind::affine && opts_.compute_values) {
          nf.instance = ++loop_instances_;
          nf.serial = new_iteration(nf.instance, 0, nf.outer_serial, l);
        }
        frames.push_back(nf);  // invalidates f
        enter_scope(core, l->scope, l->body);
      }
      continue;
    }
    // End of a body.
    exit_scope(core, *f.body);
    if (!f.loop) {
      frames.pop_back();
      continue;
    }
    int64_t nv;
    if (__builtin_add_overflow(f.value, f.loop->step, &nv) || nv >= f.stop) {
      cs.env.unset(f.var);
      frames.pop_back();
      continue;
    }
    count_step();
    f.value = nv;
    f.iteration++;
    f.next = 0;
    if (f.instance != 0) f.serial = new_iteration(f.instance, f.iteration, f.outer_serial, f.loop);
    cs.env.set(f.var, nv);
    cs.scope_iteration.at(f.loop->scope) = f.iteration;
    enter_scope(core, f.loop->scope, *f.body);
  }
  return nullptr;
}

uint32_t Interp::new_iteration(uint32_t instance, int64_t iteration, uint32_t parent,
                               const Loop* loop) {
  if (iterations_.size() >= UINT32_MAX - 1) {
    throw InputError("kernel '" + p_.name + "' runs more than 2^32 affine-loop iterations");
  }
  iterations_.push_back(AffineIteration{instance, iteration, parent, loop});
  return static_cast<uint32_t>(iterations_.size() - 1);
}

int64_t Interp::copy_offset(int core, const BufferPlacement& bp, const Tensor& t) {
  const CoreState& cs = cores_[core];
  int64_t copy = t.bufs > 1 ? cs.scope_iteration.at(t.scope) % t.bufs : 0;
  return eval(bp.byte_offset, cs.env) + copy * eval(bp.copy_stride, cs.env);
}

void Interp::enter_scope(int core, ScopeId scope, const std::vector<Stmt>&) {
  CoreState& cs = cores_[core];
  for (TensorId id : scope_buffers_.at(scope)) {
    const Tensor& t = p_.tensor(id);
    const BufferPlacement& bp = *alloc_.placements.at(id);
    int64_t part = eval(bp.partition, cs.env);
    int64_t off = copy_offset(core, bp, t);
    int64_t bytes = eval(bp.bytes_per_copy, cs.env);
    int64_t cap = t.memory == Memory::SBUF ? hw_.sbuf_usable_bytes_per_partition()
                                           : hw_.psum_bytes_per_partition;
    int64_t rows = shapes_[id][0];
    if (part < 0 || part > hw_.partitions - rows || off < 0 || bytes > cap || off > cap - bytes) {
      fail(CheckKind::capacity,
           std::string(memory_name(t.memory)) + " buffer '" + t.name + "' placed at partition " +
               std::to_string(part) + ", bytes [" + std::to_string(off) + ", " +
               std::to_string(off + bytes) + ") of each partition, outside " + hw_.name + "'s " +
               std::to_string(hw_.partitions) + " x " + std::to_string(cap) + " bytes");
    }
    live_[static_cast<size_t>(core) * p_.tensors.size() + id] = 1;
    // A new lifetime writes nothing: its bytes count as unwritten until it writes them (the
    // shadow maps compare stamps, so nothing needs resetting here).
    if (opts_.compute_values) cs.stamp[id] = new_lifetime(id);
  }
}

void Interp::exit_scope(int core, const std::vector<Stmt>& body) {
  for (const Stmt& s : body) {
    if (auto* d = std::get_if<DeclStmt>(&s.node)) {
      live_[static_cast<size_t>(core) * p_.tensors.size() + d->tensor] = 0;
      if (opts_.compute_values && cores_[core].stamp[d->tensor] != 0) {
        lifetimes_[cores_[core].stamp[d->tensor]].ended_after =
            static_cast<uint32_t>(lifetimes_.size() - 1);
      }
    }
  }
}

}  // namespace interp
}  // namespace ncv
