// Tile orders: which tile the i-th scheduled block of a stage computes.
//
// A stage hands out tiles either statically (block i takes order.at(i)) or dynamically (block takes
// a ticket from an atomic counter, then order.at(ticket)), so producer and consumer process tiles in
// a chosen order whatever order the hardware dispatches blocks in. Row-major finishes rows of tiles
// first (what RowSync consumers want), column-major finishes columns first; a table order is any
// permutation, e.g. generated so that the producer tiles one consumer tile needs run back to back.
#pragma once
#include <cstdint>

#include "braid/core/fast_div.hpp"
#include "braid/core/types.hpp"

namespace braid {

enum class OrderKind : uint8_t { RowMajor = 0, ColumnMajor = 1, Table = 2 };

inline const char* order_kind_name(OrderKind k) {
  switch (k) {
    case OrderKind::RowMajor: return "row-major";
    case OrderKind::ColumnMajor: return "column-major";
    case OrderKind::Table: return "table";
  }
  return "?";
}

struct TileOrder {
  OrderKind kind = OrderKind::RowMajor;
  // For Table: table[i] = row-major linear index of the i-th tile. A host pointer in host code, a
  // device pointer inside StageParams (the runtime copies it).
  const uint32_t* table = nullptr;

  // Kernels pass the grid with its divisors (IndexedGrid: multiply-high instead of division); host
  // code may pass a plain Grid, whose divisors are computed on the spot -- the same arithmetic.
  BRAID_HD Tile at(uint32_t i, const IndexedGrid& g) const {
    switch (kind) {
      case OrderKind::ColumnMajor: {  // y fastest: (i / y) / x == i / (x * y)
        uint32_t q, y, z, x;
        g.div_y.divmod(i, q, y);
        g.div_x.divmod(q, z, x);
        return Tile{x, y, z};
      }
      case OrderKind::Table: return delinear(table[i], g);
      default: return delinear(i, g);
    }
  }
  Tile at(uint32_t i, Grid g) const { return at(i, IndexedGrid(g)); }
};

inline constexpr TileOrder RowMajorOrder() { return TileOrder{OrderKind::RowMajor, nullptr}; }
inline constexpr TileOrder ColumnMajorOrder() { return TileOrder{OrderKind::ColumnMajor, nullptr}; }

}  // namespace braid
