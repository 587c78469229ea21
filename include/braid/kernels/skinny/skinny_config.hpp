// The skinny GEMM's shape constants and its launch configuration (host and device).
#pragma once
#include <cstdlib>
#include <stdexcept>
#include <string>

namespace braid::skinny {

constexpr int kMaxRows = 64;    // M <= 64
constexpr int kTileCols = 128;  // W columns per tile: 8 warps x 16
constexpr int kChunkK = 64;     // W rows per K-chunk (one ring stage)

struct SkinnyConfig {
  int ctas_per_sm = 2;  // persistent CTAs per SM (capped by what fits)
  int stages = 4;       // ring depth: 4, 6 or 8 chunks of 64 W rows (16 KB of W each)
  int ctas = 0;         // > 0: exactly this many CTAs (tests: tiles cut at many places)
  // "skinny-p2s4", or "skinny-c37s4" with an explicit CTA count.
  std::string name() const {
    return "skinny-" + (ctas > 0 ? "c" + std::to_string(ctas) : "p" + std::to_string(ctas_per_sm)) + "s" +
           std::to_string(stages);
  }
};

// "skinny-p2s4" / "p2s4" / "c48s8" -> the configuration (throws std::invalid_argument on anything else).
inline SkinnyConfig parse_skinny_config(std::string s) {
  if (s.rfind("skinny-", 0) == 0) s = s.substr(7);
  const size_t at = s.find('s');
  SkinnyConfig c;
  char* end = nullptr;
  if (s.size() < 4 || (s[0] != 'p' && s[0] != 'c') || at == std::string::npos)
    throw std::invalid_argument("skinny config '" + s + "': expected p<ctas per SM>s<stages> or c<ctas>s<stages>");
  const long n = std::strtol(s.c_str() + 1, &end, 10);
  if (end != s.c_str() + at || n < 1) throw std::invalid_argument("skinny config '" + s + "': bad CTA count");
  const long st = std::strtol(s.c_str() + at + 1, &end, 10);
  if (*end != '\0' || st < 1) throw std::invalid_argument("skinny config '" + s + "': bad stage count");
  if (s[0] == 'p') c.ctas_per_sm = int(n);
  else c.ctas = int(n);
  c.stages = int(st);
  return c;
}

}  // namespace braid::skinny
