python3 bench/device/unpack.py .carry/L /tmp >/dev/null
B=/tmp/new/braid-bench-attn; mkdir -p $OUT/d/tr
for r in 1 2; do
for cb in 1:512 4:2048; do IFS=: read b c <<< "$cb"
for o in skinny-a1s4-dsm skinny-a1s8-dsm skinny-a1s8 skinny-a2s4-dsm; do
  tr=""; [ $r = 1 ] && tr="--trace-dir $OUT/d/tr"
  timeout 60 $B --pick skinny-a1s4-lt,d8-c16,$o --models llama --cases decode --caches $c --batches $b --reps 40 $tr > $OUT/d/l-$b-$c-$o-r$r.log 2>&1
  echo "r$r B=$b S=$c $o: $(grep -E 'braid:(stream|pdl-only|tilesync-pdl)/' $OUT/d/l-$b-$c-$o-r$r.log | awk '{printf "%s %s; ", $1, $2}')"
done; done; done
cd $OUT && tar czf d.tgz d && rm -rf d
