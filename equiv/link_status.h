// How `ncverify report` judges one rewrite link: the registry claims a rewrite keeps its
// predecessor's bits (same_numerics_as_predecessor) or only its contract, and may declare that
// the rewrite changes the interface on purpose (Variant::interface_change); equiv's outcome at
// one option set confirms, contradicts or leaves the claim open.
#pragma once

#include <string>

#include "equiv/equiv.h"
#include "kernels/variant.h"

namespace ncv::equiv {

enum class LinkStatus : uint8_t {
  ok,       // the claim is established at this option set
  changed,  // the interfaces differ and the rewrite declares why: nothing to compare
  fail,     // the claim is contradicted: undeclared interface change, a counterexample
  unknown,  // neither established nor contradicted (e.g. the terms outgrow memory)
};
const char* link_status_name(LinkStatus s);  // "ok", "CHANGED", "FAIL", "UNKNOWN"

struct LinkJudgement {
  LinkStatus status = LinkStatus::unknown;
  // "bit-exact proved", "real proved" (with the exp overflow obligation discharged),
  // "interface changed", "refuted" or "unknown".
  std::string level;
  bool contract_holds = false;
};

// `rewrite` is the variant whose `rewrites` names the original equiv compared it with.
LinkJudgement judge_link(const kernels::Variant& rewrite, const OptionOutcome& o);

}  // namespace ncv::equiv
