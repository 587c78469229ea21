// The benchmarks' comma-separated command-line lists (braid/bench/peers.hpp).
#include <gtest/gtest.h>

#include <stdexcept>

#include "braid/bench/peers.hpp"

using braid::bench::parse_int_list;
using braid::bench::split_list;

TEST(BenchLists, SplitSkipsEmptyItems) {
  EXPECT_EQ(split_list("128x64-rowmajor,128x64-staged-sk2"),
            (std::vector<std::string>{"128x64-rowmajor", "128x64-staged-sk2"}));
  EXPECT_EQ(split_list("a,,b,"), (std::vector<std::string>{"a", "b"}));
  EXPECT_TRUE(split_list("").empty());
}

TEST(BenchLists, IntegersOrAClearError) {
  EXPECT_EQ(parse_int_list("1,4,32"), (std::vector<int>{1, 4, 32}));
  EXPECT_THROW(parse_int_list("1,x"), std::invalid_argument);
}
