// A choice among values that shrinks toward the first one.
//
// Why: in the RapidCheck packaged here (Debian's librapidcheck-dev) gen::elementOf and
// gen::element never shrink — a failing case keeps whatever element it drew (seen in
// tests/kernel_case_test.cpp, ChoiceShrinksTowardTheFirstElement). gen::inRange does shrink
// toward its lower bound, so an index drawn with it and mapped to the element does.
#pragma once

#include <rapidcheck.h>

#include <cstddef>
#include <vector>

namespace ncv::props {

template <class T>
rc::Gen<T> shrinking_choice(std::vector<T> values) {
  const size_t n = values.size();
  return rc::gen::map(rc::gen::inRange<size_t>(0, n),
                      [values = std::move(values)](size_t i) { return values[i]; });
}

}  // namespace ncv::props
