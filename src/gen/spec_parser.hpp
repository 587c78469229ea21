// The text spec format (docs/spec-format.md): a small line-based language producing a gen::Spec.
//
//   # GPT-3 MLP, 8-way tensor parallel
//   param H = 12288
//   param T = 512
//   grid g1 = (4*H/8/TN, ceildiv(T, TM))   occupancy 1  tile_time 12288
//   grid g2 = (H/TN, ceildiv(T, TM))
//   dep g2(x, y) <- g1(i, y) for i in 0..g1.x
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <string_view>

#include "gen/dsl.hpp"

namespace braid::gen {

// A syntax error: `what()` is "SOURCE:LINE:COL: error: MESSAGE".
struct SpecError : PlanError {
  int line = 0, col = 0;
  SpecError(const std::string& source, int line_, int col_, const std::string& msg)
      : PlanError(source + ":" + std::to_string(line_) + ":" + std::to_string(col_) + ": error: " + msg),
        line(line_),
        col(col_) {}
};

using ParamOverrides = std::map<std::string, int64_t>;

// Parses a spec. `source` names it in messages and is the default spec name (its file stem).
// `overrides` replace parameter values (the CLI's -D); an unknown name is an error.
Spec parse_spec(std::string_view text, const std::string& source = "<spec>", const ParamOverrides& overrides = {});

// Reads and parses a file (PlanError when it cannot be read).
Spec load_spec(const std::string& path, const ParamOverrides& overrides = {});

// Parses "name=value" (the CLI's -D argument); value is an integer expression of constants.
std::pair<std::string, int64_t> parse_define(const std::string& arg);

}  // namespace braid::gen
