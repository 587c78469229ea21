// Consumer of an installed braid: policy math (braid::core) and the generator (braid::host).
#include <cstdio>
#include "braid/policy/policy.hpp"
#include "gen/generator.hpp"
#include "gen/spec_parser.hpp"
int main() {
  auto a = braid::gen::analyze(braid::gen::parse_spec("spec t\ngrid a = (4, 2)\ngrid b = (3, 2)\ndep b(x, y) <- a(i, y) for i in 0..a.x\n"));
  braid::Grid g{4, 2, 1};
  std::printf("%u sems under RowSync, %zu candidates\n", braid::RowSync().num_sems(g), a.candidates[0].size());
}
