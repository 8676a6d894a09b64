// The fixed params of a `frontier` search: the given ones and the least value of every other
// param, refused (UsageError, exit 2) when the program cannot run with them, so no search answers
// for a program that does not exist there.
#pragma once

#include <string>

#include "model/interp/interpreter.h"
#include "model/ir/program.h"

namespace ncv::cli {

// The value of every param of `p` but `vary`: `given`, else the param's least declared value.
// Throws UsageError, naming the param, its value and the range allowed, when `vary` is not a param
// of p or is given, a given name is not a param, a value lies outside its declared domain, a
// tensor dimension that uses fixed params only is below 1 or leaves int64 there, or a tensor's
// bytes leave int64 with `vary` at the least value the search starts from.
ParamValues frontier_fixed_params(const Program& p, const ParamValues& given,
                                  const std::string& vary);

}  // namespace ncv::cli
