#!/usr/bin/env bash
# usage: scripts/headers_ab.sh  (expects /tmp/hb/{base,new} trees: a copy of /usr/include/boost in inc/ and one TU per boost/*.hpp in src/; edit B and N for the two binaries)
# A/B of `clipforge headers` on a Boost-as-project tree: cold (--clean) and warm rescans, alternating.
B=/tmp/anim-base/clipforge; N=$HOME/.cache/clipforge-target/release/clipforge
for i in 1 2 3 4 5; do
  for w in base new; do
    bin=$B; [ $w = new ] && bin=$N
    for kind in cold warm; do
      extra=""; [ $kind = cold ] && extra="--clean"
      /usr/bin/time -f "$w $kind %e s wall %U+%S cpu %M KB" $bin headers /tmp/hb/$w -I /tmp/hb/$w/inc --std c++20 --mode preprocessed --cache /tmp/hb/$w.cache $extra --json /tmp/hb/$w.json >/dev/null 2>/tmp/hb/err; tail -1 /tmp/hb/err
    done
  done
done
