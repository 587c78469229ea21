# Patch script (python3) of the uncommitted trace-phase experiment recorded in conv-rs-phases-h100-20261123.txt:
# it adds TileTrace::exchanged_ns / reduced_ns and records them for split tiles. Not part of braid: it
# perturbed the 128x128 kernel it measured (see that file).
import re
R='/work/main/'
def sub(f, old, new, count=1):
    s=open(R+f).read()
    assert old in s, (f, old[:60])
    s=s.replace(old,new,count)
    open(R+f,'w').write(s)

sub('include/braid/core/stage.cuh','''  uint64_t mainloop_end_ns;  // when its last MMA finished, before the epilogue (0: kernel does not record it)
};''','''  uint64_t mainloop_end_ns;  // when its last MMA finished, before the epilogue (0: kernel does not record it)
  // Tiles cut into segments (split-K, stream-K), the recording segment's epilogue phases (0: not split):
  uint64_t exchanged_ns;  // its partial sums stored and the tile's segments arrived (reduce-scatter: all)
  uint64_t reduced_ns;    // its sums of the segments' partials done (the output stores follow)
};''')
sub('include/braid/runtime/chain.cuh','''  double mainloop_end_us;            // when the tile's mainloop ended (relative, like start_us); -1: not recorded
};''','''  double mainloop_end_us;            // when the tile's mainloop ended (relative, like start_us); -1: not recorded
  double exchanged_us = -1, reduced_us = -1;  // split tiles: TileTrace::exchanged_ns, reduced_ns; -1: none
};''')
sub('include/braid/runtime/chain.cuh','''        out.push_back(TraceRecord{i, delinear(k, plan_.stages[i].grid), r.smid, r.block, (r.start_ns - t0) / 1e3,
                                  (r.end_ns - t0) / 1e3, r.wait_ns / 1e3,
                                  r.mainloop_end_ns ? (r.mainloop_end_ns - t0) / 1e3 : -1.0});''','''        out.push_back(TraceRecord{i, delinear(k, plan_.stages[i].grid), r.smid, r.block, (r.start_ns - t0) / 1e3,
                                  (r.end_ns - t0) / 1e3, r.wait_ns / 1e3,
                                  r.mainloop_end_ns ? (r.mainloop_end_ns - t0) / 1e3 : -1.0,
                                  r.exchanged_ns ? (r.exchanged_ns - t0) / 1e3 : -1.0,
                                  r.reduced_ns ? (r.reduced_ns - t0) / 1e3 : -1.0});''')
sub('include/braid/bench/harness.cuh','''  std::fprintf(f, "stage,tile_x,tile_y,smid,block,start_us,end_us,wait_us,mainloop_end_us\\n");
  for (const auto& r : trace)
    std::fprintf(f, "%d,%u,%u,%u,%u,%.3f,%.3f,%.3f,%.3f\\n", r.stage, r.tile.x, r.tile.y, r.smid, r.block, r.start_us,
                 r.end_us, r.wait_us, r.mainloop_end_us);''','''  std::fprintf(f, "stage,tile_x,tile_y,smid,block,start_us,end_us,wait_us,mainloop_end_us,exchanged_us,reduced_us\\n");
  for (const auto& r : trace)
    std::fprintf(f, "%d,%u,%u,%u,%u,%.3f,%.3f,%.3f,%.3f,%.3f,%.3f\\n", r.stage, r.tile.x, r.tile.y, r.smid, r.block,
                 r.start_us, r.end_us, r.wait_us, r.mainloop_end_us, r.exchanged_us, r.reduced_us);''')
g='include/braid/kernels/hopper/gemm_kernel.cuh'
sub(g,'''constexpr int kExtraSmem = 256;''','''constexpr int kExtraSmem = 384;''')
sub(g,'''  uint64_t t_start;   // traces: when the consumers took the tile, and when its mainloop ended
  uint64_t t_mainloop;
};''','''  uint64_t t_start;   // traces: when the consumers took the tile, when its mainloop ended, and for split
  uint64_t t_mainloop;  // tiles when the partials were exchanged and reduced (TileTrace)
  uint64_t t_exchanged, t_reduced;
};''')
sub(g,'''  static_assert(sizeof(BlockSync) + 2 * sizeof(PostSlot) + sizeof(UnitRing) + sizeof(uint32_t) + 16 <= kExtraSmem, "carve out more shared memory");''','''  static_assert(sizeof(BlockSync) + 2 * sizeof(PostSlot) + sizeof(UnitRing) + sizeof(uint32_t) + 16 <= kExtraSmem, "carve out more shared memory");
''')
# reduce_split_tile: phase timestamps
sub(g,'''// `share` <- the output columns this unit stores.
template <class Traits, class Accum, class Coord>
__device__ __forceinline__ bool reduce_split_tile(const typename Traits::Params& p, const StageParams& sp,
                                                  typename Traits::SharedStorage& smem, const ScheduledUnit& w,
                                                  Accum& accum, const Coord& coord, int t, int m0, int tile_n_out,
                                                  bool scatter, detail::ColumnShare& share) {''','''// `share` <- the output columns this unit stores; with traces, thread 0's t_exchanged / t_reduced <- when
// the partials were exchanged (stored, and the segments arrived) and reduced.
template <class Traits, class Accum, class Coord>
__device__ __forceinline__ bool reduce_split_tile(const typename Traits::Params& p, const StageParams& sp,
                                                  typename Traits::SharedStorage& smem, const ScheduledUnit& w,
                                                  Accum& accum, const Coord& coord, int t, int m0, int tile_n_out,
                                                  bool scatter, detail::ColumnShare& share, uint64_t& t_exchanged,
                                                  uint64_t& t_reduced) {''')
sub(g,'''  ptx::named_barrier_sync(Traits::kConsumerBarrier, Traits::kConsumerThreads);
  if (!smem.reduce_here) return false;
  share = scatter ? own : detail::ColumnShare::all(Traits::kTileN, tile_n_out);
  detail::reduce_partials(accum, coord, tile_ws, int(w.nseg), int(w.seg), t, p.M, m0, kSlotPairs,
                          Traits::kConsumerThreads, share);
  return true;''','''  ptx::named_barrier_sync(Traits::kConsumerBarrier, Traits::kConsumerThreads);
  if (!smem.reduce_here) return false;
  if (sp.trace != nullptr && t == 0) t_exchanged = ptx::globaltimer_ns();
  share = scatter ? own : detail::ColumnShare::all(Traits::kTileN, tile_n_out);
  detail::reduce_partials(accum, coord, tile_ws, int(w.nseg), int(w.seg), t, p.M, m0, kSlotPairs,
                          Traits::kConsumerThreads, share);
  if (sp.trace != nullptr && t == 0) t_reduced = ptx::globaltimer_ns();
  return true;''')
sub(g,'''      const bool scatter = w.nseg > 1 && p.sched.reduce_scatter;
      if (w.nseg > 1) {  // the tile is cut into segments: see reduce_split_tile
        if (!reduce_split_tile<Traits>(p, sp, smem, w, accum, coord, t, m0, tile_n_out, scatter, share)) continue;
      }''','''      const bool scatter = w.nseg > 1 && p.sched.reduce_scatter;
      uint64_t t_exchanged = 0, t_reduced = 0;
      if (w.nseg > 1) {  // the tile is cut into segments: see reduce_split_tile
        if (!reduce_split_tile<Traits>(p, sp, smem, w, accum, coord, t, m0, tile_n_out, scatter, share, t_exchanged,
                                       t_reduced))
          continue;
      }''')
sub(g,'''        if (t == 0) smem.post[slot] = PostSlot{w.tile, w.tile_lin, 0u, t_start, t_mainloop};''','''        if (t == 0) smem.post[slot] = PostSlot{w.tile, w.tile_lin, 0u, t_start, t_mainloop, t_exchanged, t_reduced};''')
sub(g,'''            r.mainloop_end_ns = ps.t_mainloop;''','''            r.mainloop_end_ns = ps.t_mainloop;
            r.exchanged_ns = ps.t_exchanged;
            r.reduced_ns = ps.t_reduced;''')
sub(g,'''          r.mainloop_end_ns = t_mainloop;''','''          r.mainloop_end_ns = t_mainloop;
          r.exchanged_ns = t_exchanged;
          r.reduced_ns = t_reduced;''')
print("ok")
