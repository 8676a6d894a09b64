// The SPEC.json format of `ncverify oracle` (oracle/README.md "Spec format"): the
// AttentionSpec fields plus the inputs q, k, v as nested arrays, and the OUT.json it produces.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "oracle/attention_spec.h"

namespace ncv::oracle {

struct SpecFile {
  AttentionSpec spec;
  AttentionInputs inputs;
};

// Parses and validates a spec document. Throws SpecError whose path names the offending field
// ("q[0][1][2][3]", "mask.kind", "block_table.table[1][0]", ...): missing or unknown fields,
// wrong types, wrong shapes, values not representable in input_dtype (when given).
SpecFile parse_spec_json(const nlohmann::json& doc);
// Same from text; a JSON syntax error is reported with path "<document>".
SpecFile parse_spec_text(const std::string& text);

// OUT.json: {"oracle": "exact"|"fast", "significant_digits": N, "out": [B][H][Sq][d] decimal
// strings, "lse": [B][H][Sq] decimal strings ("-inf" for a fully masked row without sink)}.
nlohmann::json oracle_output_json(const AttentionSpec& spec, const OracleOutput& out, bool fast);

// Shortest round-trip decimal of a double ("nan", "inf", "-inf" for the non-finite values).
std::string double_to_decimal(double x);

}  // namespace ncv::oracle
