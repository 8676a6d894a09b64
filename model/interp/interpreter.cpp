// A run of one Program, from params and inputs to RunResult: prepare (params, shapes,
// allocation, memory, inputs), walk (the lockstep cores, walk.cpp), check that every output
// element was written, and turn the first failed check into a DynamicError.
#include <algorithm>
#include <cstring>
#include <limits>

#include "model/interp/interp.h"
#include "model/ir/printer.h"

namespace ncv {
inline namespace interp {

namespace {

// a * b for a size of the named tensor (the message is built only on overflow). EvalError, like
// any other arithmetic beyond int64: the run reports it as a well_formed failure.
int64_t mul_checked(int64_t a, int64_t b, const std::string& tensor) {
  int64_t r;
  if (__builtin_mul_overflow(a, b, &r)) {
    throw EvalError("the size of tensor '" + tensor + "' in bytes or elements exceeds int64");
  }
  return r;
}

Env param_env(const ParamValues& params) {
  Env env;
  for (const auto& [name, value] : params) env.set(name, value);
  return env;
}

// Bytes of every HBM tensor (0 for buffers), by TensorId.
std::vector<int64_t> hbm_sizes(const Program& p, const std::vector<std::vector<int64_t>>& shapes) {
  std::vector<int64_t> out(p.tensors.size(), 0);
  for (const Tensor& t : p.tensors) {
    if (t.on_chip()) continue;
    int64_t n = static_cast<int64_t>(dtype_size(t.dtype));
    for (int64_t d : shapes[t.id]) n = mul_checked(n, d, t.name);
    out[t.id] = n;
  }
  return out;
}

int64_t total_bytes(const std::vector<int64_t>& sizes) {
  int64_t total = 0;
  for (int64_t n : sizes) {
    if (__builtin_add_overflow(total, n, &total)) {
      throw EvalError("the HBM tensors' total size in bytes exceeds int64");
    }
  }
  return total;
}

}  // namespace

int64_t hbm_bytes(const Program& p, const ParamValues& params) {
  const auto shapes = concrete_shapes(p, params);
  try {
    return total_bytes(hbm_sizes(p, shapes));
  } catch (const EvalError& e) {
    throw well_formed_error(p, params, e.message);
  }
}

namespace {

// The first difference between `a` and a rerun `b` that gave what `a` left open other values
// ("" when none): how they ended, then every output byte for byte. `with` says what the rerun
// changed ("with zeros in those bytes").
std::string rerun_difference(const RunResult& a, const RunResult& b, const std::string& with) {
  if (a.error || b.error) {
    const std::string ea = a.error ? a.error->message : "no dynamic-check failure";
    const std::string eb = b.error ? b.error->message : "no dynamic-check failure";
    return ea == eb ? "" : "the run ends differently " + with + ": " + eb;
  }
  for (const auto& [name, t] : a.outputs) {
    const auto it = b.outputs.find(name);
    if (it == b.outputs.end() || it->second.bytes == t.bytes) continue;
    const HostTensor& u = it->second;
    int64_t first = -1, differing = 0;
    for (int64_t i = 0; i < t.num_elements(); ++i) {
      if (t.bits(i) == u.bits(i)) continue;
      if (first < 0) first = i;
      ++differing;
    }
    return "output '" + name + "' depends on them: " + std::to_string(differing) +
           " element(s) change " + with + ", first at flat index " + std::to_string(first);
  }
  return "";
}

// `a` failed with its noted open point `note` (which is moved out) and the difference a rerun
// found.
void fail_with(RunResult& a, std::optional<DynamicError>& note, const std::string& diff) {
  DynamicError e = std::move(*note);
  note.reset();
  e.detail += "; " + diff;
  e.build_message();
  a.error = std::move(e);
  a.outputs.clear();
}

// The values the activation reruns write for inputs outside a function's range (run A wrote the
// default NaN): one of each sign and large, so that a comparison with any threshold, an integer
// conversion (NaN -> 0) or a product with zero (NaN * 0 = NaN) comes out differently from A in
// at least one of them.
constexpr float kActSubstitutes[] = {0x1p100f, -0x1p100f};

}  // namespace

// Run A records what the documentation leaves open and the hardware fills with some value: the
// first read of bytes the reader never wrote, the first activation input outside its function's
// range. Reruns give each other values, one kind at a time (the other as in A), and it fails the
// run only when a rerun ends differently or writes another output byte; otherwise A stands with a
// note. Reruns are made only for the kinds A met.
RunResult run_program(const Program& p, const ParamValues& params,
                      const std::map<std::string, HostTensor>& inputs, const RunOptions& options) {
  // An observer (equiv's term builder) sees one run's values; it keeps the strict reads and the
  // default NaN for activation inputs outside their range (act_apply's, which its terms use;
  // equiv's concrete runs, without an observer, decide whether anything depends on it).
  if (options.strict_reads || !options.compute_values || options.observer) {
    return Interpreter(p, params, inputs, options).run();
  }
  const ActivationRange record_act{.record = true};
  RunResult a = Interpreter(p, params, inputs, options, ForeignReads::record, record_act).run();
  if (!a.unwritten_read && !a.undefined_activation) return a;
  // Reruns: no trace, no observer (equiv's terms come from the first run), the same seeds.
  RunOptions again = options;
  again.record_trace = false;
  again.observer = nullptr;
  if (a.unwritten_read) {
    const std::pair<ForeignReads, const char*> reruns[] = {
        {ForeignReads::fill_mixed, "other bytes"}, {ForeignReads::fill_zeros, "zeros"}};
    for (const auto& [fill, contents] : reruns) {
      const RunResult b = Interpreter(p, params, inputs, again, fill).run();
      const std::string diff =
          rerun_difference(a, b, std::string("with ") + contents + " in those bytes");
      if (diff.empty()) continue;
      fail_with(a, a.unwritten_read, diff);
      return a;
    }
  }
  if (a.undefined_activation) {
    for (const float s : kActSubstitutes) {
      const ActivationRange act{.record = false, .substitute = s};
      const RunResult b = Interpreter(p, params, inputs, again, ForeignReads::record, act).run();
      const std::string diff =
          rerun_difference(a, b,
                           "with " + std::string(s < 0 ? "-2^100" : "2^100") +
                               " as the function's output for the inputs outside its range");
      if (diff.empty()) continue;
      fail_with(a, a.undefined_activation, diff);
      return a;
    }
  }
  return a;
}

Interpreter::Interpreter(const Program& p, const ParamValues& params,
                         const std::map<std::string, HostTensor>& inputs, const RunOptions& opts,
                         ForeignReads foreign, ActivationRange act)
    : p_(p),
      params_(params),
      inputs_(inputs),
      opts_(opts),
      hw_(opts.hw ? *opts.hw : hw_config_trn1()),
      m_(p, hw_, opts.compute_values),
      foreign_(foreign),
      act_oor_{.substitute = act.substitute},
      act_record_(act.record),
      trace_(opts.record_trace) {}

void Interpreter::foreign_read(CheckKind kind, const std::string& detail) {
  if (!result_.unwritten_read) result_.unwritten_read = to_error(kind, detail);
}

namespace {

// A byte of the mixed fill: a function of where it is (so refilling the same bytes is a no-op),
// spread over all 256 values (NaNs, infinities, huge and tiny numbers, every integer byte).
uint8_t mixed_fill_byte(uint64_t where) {
  uint64_t z = where + 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return static_cast<uint8_t>(z ^ (z >> 31));
}

}  // namespace

void Interpreter::foreign_bytes(const Resolved& r, const ShadowMap::Piece& piece) {
  if (foreign_ != ForeignReads::fill_zeros && foreign_ != ForeignReads::fill_mixed) return;
  const bool zeros = foreign_ == ForeignReads::fill_zeros;
  const uint64_t base = (static_cast<uint64_t>(r.core) << 56) ^
                        (static_cast<uint64_t>(r.memory) << 52) ^
                        (r.tensor->on_chip() ? 0 : static_cast<uint64_t>(r.id) << 40);
  auto fill = [&](uint8_t* row, int64_t row_index) {
    for (int64_t b = piece.begin; b < piece.end; ++b) {
      row[b] = zeros ? 0
                     : mixed_fill_byte(base ^ (static_cast<uint64_t>(row_index) << 32) ^
                                       static_cast<uint64_t>(b));
    }
  };
  if (!r.tensor->on_chip()) {
    fill(m_.hbm[r.id].data(), 0);
    return;
  }
  HostMemory& mem = m_.memory(r.core, r.memory);
  mem.prepare(piece.p0, piece.p1 - piece.p0, piece.begin, piece.end);
  const int64_t stride = r.memory == Memory::SBUF ? m_.sbuf_stride : m_.psum_stride;
  for (int64_t part = piece.p0; part < piece.p1; ++part) fill(mem.data() + part * stride, part);
}

RunResult Interpreter::run() {
  check_params(p_, params_);  // the user's params: InputError, nothing has run
  try {
    prepare();
    if (count_steps(p_, params_, opts_.max_steps).steps > opts_.max_steps) {
      throw InputError("kernel '" + p_.name + "' would take more than " +
                       std::to_string(opts_.max_steps) +
                       " steps (loop iterations and instruction instances) with these params: "
                       "over the step budget (--max-steps N raises it)");
    }
    setup_memory();
    load_inputs();
    walk();
    current_ = nullptr;
    check_outputs_written();
  } catch (const CheckFailure& f) {
    result_.error = to_error(f.kind, f.detail);
  } catch (const EvalError& ev) {
    // Shape, size, loop-bound, placement or index arithmetic beyond int64 at these params.
    result_.error = to_error(CheckKind::well_formed, "arithmetic beyond int64: " + ev.message);
  } catch (const DynamicError& e) {
    result_.error = e;  // a shape below 1 (concrete_shapes)
  }
  if (result_.undefined_activation) {
    DynamicError& e = *result_.undefined_activation;
    e.detail += "; " + std::to_string(act_oor_.count) + " in the run";
    e.build_message();
  }
  if (opts_.compute_values && !result_.error) collect_outputs();
  result_.trace = trace_.take();
  return std::move(result_);
}

// The grid, concrete shapes and strides, the allocation and the buffers of each scope, for params
// already checked against the domain. A shape or grid the kernel's arithmetic gets wrong is a
// well_formed failure (DynamicError, EvalError, CheckFailure).
void Interpreter::prepare() {
  // No cap on the tensor count: TensorId, the shadow stamps (shadow_map.h) and the trace's
  // Region::tensor are 32-bit and the timing model's space keys hold a whole TensorId; the
  // 65534 cap was left from a 16-bit per-byte owner tag the interval shadow map replaced.
  // A traced kernel that unrolls its Python loops declares a tensor per iteration
  // (nki-library's attention_cte at 32768 keys: over 65534).
  param_env_ = param_env(params_);
  m_.grid = eval(p_.grid, param_env_);
  if (m_.grid < 1 || m_.grid > kMaxGrid) {
    fail(CheckKind::well_formed, "grid " + p_.grid.str() + " = " + std::to_string(m_.grid) +
                                     "; the model runs 1 to " + std::to_string(kMaxGrid) +
                                     " program instances");
  }
  m_.shapes = concrete_shapes(p_, params_);
  for (const Tensor& t : p_.tensors) {
    const auto& s = m_.shapes[t.id];
    std::vector<int64_t> es(s.size(), 1);
    for (int d = static_cast<int>(s.size()) - 2; d >= 0; --d) {
      es[d] = mul_checked(es[d + 1], s[d + 1], t.name);
    }
    // Every declared tensor's size in bytes fits int64, whether or not its scope is ever
    // entered ("size fits int64" in prove is a property of the declaration).
    if (!s.empty()) {
      mul_checked(mul_checked(es[0], s[0], t.name), static_cast<int64_t>(dtype_size(t.dtype)),
                  t.name);
    }
    m_.estrides.push_back(std::move(es));
  }
  m_.alloc = allocate(p_, hw_);
  // The innermost loop scope around each instruction (the compiler balances copies per
  // iteration of that loop).
  instr_scope_.assign(p_.num_instructions, 0);
  in_program_guard_.assign(p_.num_instructions, false);
  const SymbolId pid = intern_symbol(kProgramIdParam);
  for_each_stmt(p_, [&](const std::vector<const Loop*>& loops, const Stmt& s) {
    if (auto* i = std::get_if<InstrStmt>(&s.node)) {
      instr_scope_.at(i->id) = loops.empty() ? 0 : loops.back()->scope;
      in_program_guard_.at(i->id) = std::any_of(loops.begin(), loops.end(), [&](const Loop* l) {
        return l->start.mentions(pid) || l->stop.mentions(pid);
      });
    }
  });
  scope_buffers_.assign(p_.num_scopes, {});
  for (const Tensor& t : p_.tensors) {
    if (t.kind == TensorKind::Buffer) scope_buffers_.at(t.scope).push_back(t.id);
  }
}

// The dynamic error of a failed check, with the instance, core, loop indices and params.
DynamicError Interpreter::to_error(CheckKind kind, std::string detail) const {
  DynamicError e;
  e.kind = kind;
  e.kernel = p_.name;
  e.core = current_core_;
  if (current_) {
    e.instruction = current_->id;
    e.source_file = p_.source_file.value;
    e.source_line = current_->source_line.value;
    try {
      e.instruction_text = print_instruction(p_, current_->ins);
    } catch (...) {
      e.instruction_text = std::string(op_name(current_->ins));
    }
  }
  if (current_core_ < static_cast<int>(frames_.size())) {
    for (const Frame& fr : frames_[static_cast<size_t>(current_core_)]) {
      if (fr.loop) e.loop_indices.emplace_back(fr.loop->var, fr.value);
    }
  }
  for (const auto& kv : params_) e.params.emplace_back(kv.first, kv.second);
  e.detail = std::move(detail);
  e.build_message();
  return e;
}

void Interpreter::walk() {
  frames_.assign(m_.grid, {});
  std::vector<const InstrStmt*> next(m_.grid, nullptr);
  for (int c = 0; c < m_.grid; ++c) {
    m_.cores[c].env = param_env_;
    m_.cores[c].env.set(kProgramIdParam, c);
    frames_[c].push_back(Frame{&p_.body, 0, nullptr, 0, 0, 0});
    current_core_ = c;
    enter_scope(c, 0);
    next[c] = advance(c);
  }
  // A core-to-core transfer (an access naming another core: nki.isa.sendrecv) is a rendezvous:
  // the core waits until every core it names has reached the same statement, as sendrecv
  // blocks until its peer posts the matching transfer. Otherwise the cores step together, so a
  // statement one core skips (a loop whose trip count is 0 there: the source's `if prg_id == 0`)
  // delays only that core's next transfer, never lands a transfer in a buffer the peer has not
  // entered yet.
  // The peers a core's next instruction names (its accesses' `core`s other than its own).
  auto named_peers = [&](int c) {
    std::vector<int64_t> peers;
    const Instruction& ins = next[c]->ins;
    for (const auto& list : {written_accesses(ins), read_accesses(ins)}) {
      for (const Access* a : list) {
        if (!a->core) continue;
        const int64_t peer = eval(*a->core, m_.cores[c].env);
        if (peer >= 0 && peer < m_.grid && peer != c) peers.push_back(peer);
      }
    }
    return peers;
  };
  // Two different statements meet when both lie inside loops whose bounds mention the program
  // id and each names the other's core: a kernel traced once per program id has each program's
  // statements under its own guard (the front end's per_program.py), so its two sides of one
  // nki.isa.sendrecv are two statements. Every other transfer waits for the same statement, as
  // before (a pair outside such loops never meets another statement, so the solver's pairing of
  // iterations, solver/initialization.h, holds).
  auto meets = [&](int c, int64_t peer) {
    if (next[peer] == next[c]) return true;
    if (!next[peer] || !in_program_guard_.at(next[c]->id) ||
        !in_program_guard_.at(next[peer]->id)) {
      return false;
    }
    const std::vector<int64_t> back = named_peers(static_cast<int>(peer));
    return std::find(back.begin(), back.end(), c) != back.end();
  };
  auto waits = [&](int c) {
    for (int64_t peer : named_peers(c)) {
      if (!meets(c, peer)) return true;
    }
    return false;
  };
  // The cores' order within each step (RunOptions::schedule_seed); scope entries and exits
  // between steps touch only the core's own buffers, so they keep core order.
  std::vector<int> order;
  std::vector<bool> blocked(m_.grid, false);
  for (uint64_t step = 0;; ++step) {
    bool any = false, ran = false;
    for (int c = 0; c < m_.grid; ++c) blocked[c] = next[c] != nullptr && waits(c);
    schedule_order(opts_.schedule_seed, step, static_cast<int>(m_.grid), order);
    for (int c : order) {
      if (!next[c]) continue;
      any = true;
      if (blocked[c]) continue;
      ran = true;
      execute(c, *next[c]);
    }
    if (!any) break;
    if (!ran) {
      current_core_ = 0;
      fail(CheckKind::well_formed,
           "every running core waits at a core-to-core transfer its peer never reaches (core 0 at "
           "instruction #" +
               std::to_string(next[0] ? next[0]->id : 0) + ")");
    }
    for (int c = 0; c < m_.grid; ++c) {
      if (next[c] && !blocked[c]) next[c] = advance(c);
    }
  }
}

// Value runs: every element of every output was written (output_not_written).
void Interpreter::check_outputs_written() {
  if (!opts_.compute_values) return;
  for (const Tensor& t : p_.tensors) {
    if (t.kind != TensorKind::Output) continue;
    const int64_t dsize = static_cast<int64_t>(dtype_size(t.dtype));
    const auto gaps = shadows_->unwritten_hbm(t.id, static_cast<int64_t>(m_.hbm[t.id].size()));
    if (gaps.count > 0) {
      int64_t missing = gaps.count / dsize;
      int64_t first = gaps.first / dsize;
      if (opts_.allow_unwritten_outputs) {
        result_.unwritten_output_elements[t.name] = missing;
        continue;
      }
      fail(CheckKind::output_not_written, "output '" + t.name + "' has " + std::to_string(missing) +
                                              " element(s) never written (first at flat index " +
                                              std::to_string(first) + ")");
    }
  }
}

void Interpreter::collect_outputs() {
  for (const Tensor& t : p_.tensors) {
    if (t.kind != TensorKind::Output) continue;
    HostTensor h;
    h.dtype = t.dtype;
    h.shape = m_.shapes[t.id];
    if (opts_.observer) opts_.observer->output(t, m_.hbm[t.id].data(), h.num_elements());
    h.bytes = std::move(m_.hbm[t.id]);
    result_.outputs.emplace(t.name, std::move(h));
  }
}

void Interpreter::setup_memory() {
  Env env = param_env_;
  env.set(kProgramIdParam, 0);
  int64_t sbuf_peak = eval(m_.alloc.sbuf_peak_bytes, env);
  int64_t psum_peak = eval(m_.alloc.psum_peak_bytes, env);
  int64_t sbuf_cap = hw_.sbuf_usable_bytes_per_partition();
  int64_t psum_cap = hw_.psum_bytes_per_partition;
  for (const Tensor& t : p_.tensors) {
    if (t.on_chip() && !within_limit(IntOps{}, m_.shapes[t.id][0], hw_.partitions)) {
      fail(Rule::buffer_partitions, "buffer '" + t.name + "' has " +
                                        std::to_string(m_.shapes[t.id][0]) + " partitions; " +
                                        hw_.name + " has " + std::to_string(hw_.partitions));
    }
  }
  // Over capacity: a failure in the strict model, else the spill the compiler would insert
  // (RunOptions::spills_allowed), recorded as the run's unknown and checked per instruction.
  std::string over;
  if (sbuf_peak > sbuf_cap) {
    over = "live SBUF buffers need " + std::to_string(sbuf_peak) +
           " bytes per partition at their peak; " + hw_.name + " has " + std::to_string(sbuf_cap) +
           " usable";
    sbuf_spill_capacity_ = sbuf_cap;
  }
  if (psum_peak > psum_cap) {
    over += (over.empty() ? "" : "; ") + ("live PSUM buffers need " + std::to_string(psum_peak) +
                                          " bytes per partition at their peak; " + hw_.name +
                                          " has " + std::to_string(psum_cap));
    psum_spill_capacity_ = psum_cap;
  }
  if (!over.empty()) {
    if (!opts_.spills_allowed) fail(CheckKind::capacity, over);
    result_.spill = to_error(
        CheckKind::capacity,
        over +
            ": the compiler's automatic allocation spills to the next memory level there, which "
            "the model does not decide (values computed as with spills, latency without them)");
  }
  bool any_explicit = std::any_of(p_.tensors.begin(), p_.tensors.end(),
                                  [](const Tensor& t) { return t.placement.has_value(); });
  // The arrays hold the allocator's layout (allocator.h): every auto-placed copy ends within the
  // layout's extent, which may pass the capacity when the compiler's requirement fits (the
  // layout keeps whole tensors apart; the requirement counts what is live). Explicit placements
  // lie inside the capacity (enter_scope checks them), so with any of them the arrays cover both.
  const int64_t sbuf_layout = eval(m_.alloc.sbuf_layout_bytes, env);
  const int64_t psum_layout = eval(m_.alloc.psum_layout_bytes, env);
  m_.sbuf_stride =
      std::max<int64_t>(any_explicit ? std::max(sbuf_cap, sbuf_layout) : sbuf_layout, 4);
  // PSUM like SBUF (filling the whole PSUM per run dominated short runs).
  m_.psum_stride =
      std::max<int64_t>(any_explicit ? std::max(psum_cap, psum_layout) : psum_layout, 4);
  const std::vector<int64_t> hbm_sizes_by_id = hbm_sizes(p_, m_.shapes);
  int64_t hbm = total_bytes(hbm_sizes_by_id);
  // Values of SBUF and PSUM per core and of HBM (the shadow maps are small).
  int64_t onchip = (m_.sbuf_stride + m_.psum_stride) * hw_.partitions * m_.grid;
  int64_t need = 0;
  if (opts_.compute_values && __builtin_add_overflow(hbm, onchip, &need)) {
    need = std::numeric_limits<int64_t>::max();
  }
  if (need > opts_.memory_budget_bytes) {
    throw InputError("this run needs about " + std::to_string(need >> 20) +
                     " MiB of host memory, over the budget of " +
                     std::to_string(opts_.memory_budget_bytes >> 20) + " MiB (kernel '" + p_.name +
                     "'; --memory-budget-mib N raises it)");
  }
  m_.cores.resize(m_.grid);
  m_.live.assign(p_.tensors.size() * m_.grid, 0);
  m_.hbm.resize(p_.tensors.size());
  for (auto& c : m_.cores) {
    c.scope_iteration.assign(p_.num_scopes, 0);
    c.load_at_iteration.assign(p_.num_scopes, EngineLoad{});
  }
  if (!opts_.compute_values) return;
  for (auto& c : m_.cores) {
    // Poison (NaN for floats): reads of unwritten bytes fail the shadow check before any value is
    // used, so this only keeps stale host memory out of the arrays. Applied lazily, as accesses
    // resolve (host_memory.h).
    const auto rows = static_cast<size_t>(hw_.partitions);
    c.sbuf = HostMemory(rows, static_cast<size_t>(m_.sbuf_stride), 0xFF);
    c.psum = HostMemory(rows, static_cast<size_t>(m_.psum_stride), 0xFF);
    c.act_regs.assign(static_cast<size_t>(hw_.partitions), 0.0f);
    c.vec_regs.assign(static_cast<size_t>(hw_.partitions), 0.0f);
    c.vec_regs_undefined.assign(static_cast<size_t>(hw_.partitions), 0);
  }
  shadows_.emplace(p_, m_.grid, hw_.partitions, hbm_sizes_by_id);
  if (foreign_ != ForeignReads::fail) shadows_->set_sink(this);
  for (const Tensor& t : p_.tensors) {
    if (!t.on_chip()) m_.hbm[t.id].assign(static_cast<size_t>(hbm_sizes_by_id[t.id]), 0xFF);
  }
}

void Interpreter::load_inputs() {
  for (const auto& [name, h] : inputs_) {
    auto id = p_.find_tensor(name);
    if (!id || p_.tensor(*id).kind != TensorKind::Input) {
      throw InputError("input '" + name + "' is not an input of kernel '" + p_.name + "'");
    }
  }
  for (const Tensor& t : p_.tensors) {
    if (t.kind != TensorKind::Input) continue;
    auto it = inputs_.find(t.name);
    if (it == inputs_.end()) {
      if (!opts_.compute_values) continue;  // trace-only runs need no values
      throw InputError("input '" + t.name + "' was not given");
    }
    const HostTensor& h = it->second;
    if (h.dtype != t.dtype) {
      throw InputError("input '" + t.name + "' has dtype " + std::string(dtype_name(h.dtype)) +
                       ", kernel expects " + std::string(dtype_name(t.dtype)));
    }
    if (h.shape != m_.shapes[t.id]) {
      auto fmt = [](const std::vector<int64_t>& s) {
        std::string r = "[";
        for (size_t i = 0; i < s.size(); ++i) r += (i ? ", " : "") + std::to_string(s[i]);
        return r + "]";
      };
      throw InputError("input '" + t.name + "' has shape " + fmt(h.shape) + ", kernel expects " +
                       fmt(m_.shapes[t.id]));
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
    if (opts_.compute_values) {
      m_.hbm[t.id] = h.bytes;
      if (opts_.observer) opts_.observer->input(t, m_.hbm[t.id].data(), h.num_elements());
    }
  }
}

}  // namespace interp
}  // namespace ncv
