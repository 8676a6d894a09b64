#include "equiv/link_status.h"

namespace ncv::equiv {

const char* link_status_name(LinkStatus s) {
  switch (s) {
    case LinkStatus::ok:
      return "ok";
    case LinkStatus::changed:
      return "CHANGED";
    case LinkStatus::fail:
      return "FAIL";
    case LinkStatus::unknown:
      return "UNKNOWN";
  }
  return "?";
}

LinkJudgement judge_link(const kernels::Variant& rewrite, const OptionOutcome& o) {
  LinkJudgement j;
  j.contract_holds = o.holds(Level::contract);
  // A declared change only covers what equiv found at the interface: a run error (the rewrite
  // fails a dynamic check where the original runs) is a contradiction whatever was declared.
  if (!o.interface_error.empty() && o.run_error.empty() && !rewrite.interface_change.empty()) {
    j.level = "interface changed";
    j.status = LinkStatus::changed;
    return j;
  }
  if (!o.interface_error.empty() || !o.run_error.empty()) {
    j.level = "refuted";
  } else if (o.bit_exact == Verdict::proved) {
    j.level = "bit-exact proved";
  } else if (o.real == Verdict::proved && o.overflow_ok) {
    j.level = "real proved";
  } else if (o.real == Verdict::refuted || o.numeric == Verdict::refuted) {
    j.level = "refuted";
  } else {
    j.level = "unknown";
  }
  const bool bit_ok = !rewrite.same_numerics_as_predecessor || o.bit_exact == Verdict::proved;
  if (j.contract_holds && bit_ok) {
    j.status = LinkStatus::ok;
  } else if (j.level == "refuted" ||
             (rewrite.same_numerics_as_predecessor && o.bit_exact == Verdict::refuted)) {
    j.status = LinkStatus::fail;
  } else {
    j.status = LinkStatus::unknown;
  }
  return j;
}

}  // namespace ncv::equiv
