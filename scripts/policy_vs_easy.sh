#!/usr/bin/env bash
# Replays each SWF trace under EASY and under the default policy (with any snn-sim flags given
# after --) and checks the default against EASY, once, as written: mean bounded slowdown at most
# 0.67x, utilization within 0.5%, max wait at most, the spread of normalized user wait (NUWT sd)
# and the worst user's mean bounded slowdown at most (issue 38; scripts/shaken_replays.py checks
# the same and p99 wait over shaken copies). With
# --thirds, each trace's jobs are also cut into three consecutive parts (header kept), replayed
# apart: a policy tuned to one file tends to fail on the parts.
#   scripts/policy_vs_easy.sh [--thirds] TRACE.swf[.gz]... [-- SNN_SIM_FLAGS...]
# Needs a build (BUILD_DIR, default build/).
set -euo pipefail

sim="${BUILD_DIR:-build}/sim/snn-sim"
thirds=0
traces=()
while (($#)); do
  case "$1" in
    --thirds) thirds=1 ;;
    --) shift; break ;;
    -h | --help) sed -n '2,8p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) traces+=("$1") ;;
  esac
  shift
done
if ((${#traces[@]} == 0)); then
  echo "policy_vs_easy: name at least one trace (--help)" >&2
  exit 2
fi
if [[ ! -x "$sim" ]]; then
  echo "policy_vs_easy: no $sim; build first (scripts/build.sh) or set BUILD_DIR" >&2
  exit 2
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cases=()
for t in "${traces[@]}"; do
  [[ -r "$t" ]] || { echo "policy_vs_easy: cannot read $t" >&2; exit 2; }
  cases+=("$t")
  if ((thirds)); then
    name=$(basename "$t"); name=${name%.gz}; name=${name%.swf}
    plain="$work/$name.swf"
    if [[ "$t" == *.gz ]]; then zcat "$t" >"$plain"; else cp "$t" "$plain"; fi
    awk -v out="$work/$name" '
      /^;/ { header = header $0 "\n"; next }
      NF { jobs[++n] = $0 }
      END {
        per = int((n + 2) / 3)
        for (k = 0; k < 3; ++k) {
          f = out "-part" (k + 1) ".swf"
          printf "%s", header > f
          for (i = k * per + 1; i <= (k + 1) * per && i <= n; ++i) print jobs[i] > f
          close(f)
        }
      }' "$plain"
    for k in 1 2 3; do cases+=("$work/$name-part$k.swf"); done
  fi
done

figures() {  # snn-sim output -> "bsld util maxwait nuwt-sd worst-user-bsld"
  awk -F': ' '/^mean bounded slowdown/ {b = $2} /^utilization/ {u = $2} /^max wait s/ {m = $2}
              /^normalized user wait sd/ {n = $2} /^worst user mean bounded slowdown/ {
                split($2, w, " "); x = w[1] }
              END {print b, u, m, n, x}'
}

printf '%-36s %-16s %-15s %-19s %-17s %-17s %s\n' trace "bsld (<=0.67x)" "util (>=-0.5%)" \
  "max wait s (<=)" "NUWT sd (<=)" "worst bsld (<=)" met
all=0
for c in "${cases[@]}"; do
  read -r eb eu em en ew < <("$sim" --trace="$c" --policy=easy | figures)
  read -r db du dm dn dw < <("$sim" --trace="$c" --policy=default "$@" | figures)
  awk -v c="$(basename "$c")" -v eb="$eb" -v eu="$eu" -v em="$em" -v en="$en" -v ew="$ew" \
    -v db="$db" -v du="$du" -v dm="$dm" -v dn="$dn" -v dw="$dw" 'BEGIN {
      ok_b = db <= 0.67 * eb; ok_u = du >= eu - 0.005; ok_m = dm <= em; ok_n = dn <= en
      ok_w = dw <= ew
      mark = "-+"
      printf "%-36s %6.1f/%-6.1f %s %.3f/%.3f %s %7d/%-7d %s %.4f/%.4f %s %6.0f/%-6.0f %s %d/5\n",
        c, db, eb, substr(mark, ok_b + 1, 1), du, eu, substr(mark, ok_u + 1, 1), dm, em,
        substr(mark, ok_m + 1, 1), dn, en, substr(mark, ok_n + 1, 1), dw, ew,
        substr(mark, ok_w + 1, 1), ok_b + ok_u + ok_m + ok_n + ok_w
      exit !(ok_b && ok_u && ok_m && ok_n && ok_w)
    }' || all=1
done
echo "(default/EASY; + met, - not)"
exit "$all"
