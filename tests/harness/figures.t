#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Self-test of harness/figures: a table in a document is what its recorded
# figures give, and the check says when it is not.
set -u
here=$(cd "$(dirname "$0")" && pwd)
. "$here/tap.sh"
figures=$here/../../harness/figures

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export FIGURES_DIR=$tmp/figures
mkdir -p "$tmp/run" "$FIGURES_DIR"

# A run's output as harness/bench leaves it.
printf '%s\t%s\t%s\t%s\t%s\n' \
	cost 8 classic ns_per_sample 1200 \
	cost 8 deferred ns_per_sample 1500.6 \
	cost 8 deferred ratio 1.250416 \
	cost 32 classic ns_per_sample 2400 \
	cost 32 deferred ns_per_sample 2000 \
	walk 8 fp ns_per_frame 30 >"$tmp/run/results.tsv"
echo "Measured 2026-11-28 on 2 host CPUs, 24 GiB, guest under QEMU tcg, kernel 6.12.117 with config/bench.config; 266 s." \
	>"$tmp/run/results.md"

doc=$tmp/doc.md
cat >"$doc" <<'EOT'
# Costs

<!-- figures cost benches=cost cols=classic,deferred metrics=ns_per_sample -->
<!-- end figures -->

Text after the block.
EOT

tap_plan 11

tap_ok "record keeps the rows and says where they come from" bash -c '
	"$0" record cost --from "$1/run/results.tsv" --command "harness/bench cost" >/dev/null &&
	grep -qx "# command: harness/bench cost" "$FIGURES_DIR/cost.tsv" &&
	grep -q "^# machine: 2 host CPUs, 24 GiB, guest under QEMU tcg" "$FIGURES_DIR/cost.tsv" &&
	[ "$(grep -vc "^#" "$FIGURES_DIR/cost.tsv")" = 6 ]' "$figures" "$tmp"

tap_ok "an empty block is out of date" expect_fail "out of date with" "$figures" check "$doc"

tap_ok "update writes the table" bash -c '
	"$0" update "$1" >/dev/null &&
	grep -qx "| bench | case | metric | classic | deferred |" "$1" &&
	grep -qx "| cost | 8 | ns_per_sample | 1200 | 1501 |" "$1" &&
	grep -qx "| cost | 32 | ns_per_sample | 2400 | 2000 |" "$1" &&
	! grep -q "ratio\|walk" "$1" &&
	grep -qx "Text after the block." "$1"' "$figures" "$doc"

tap_ok "the written table checks" bash -c '"$0" check "$1" >/dev/null' "$figures" "$doc"

tap_ok "a hand edit of a figure fails the check" bash -c '
	sed "s/| 2400 | 2000 |/| 2400 | 1900 |/" "$1" >"$1.edited" &&
	! "$0" check "$1.edited" >/dev/null' "$figures" "$doc"

tap_ok "new figures make the table out of date" bash -c '
	sed -i "s/\t2000\$/\t1990/" "$FIGURES_DIR/cost.tsv" &&
	! "$0" check "$1" >/dev/null && "$0" update "$1" >/dev/null &&
	grep -qx "| cost | 32 | ns_per_sample | 2400 | 1990 |" "$1"' "$figures" "$doc"

printf '<!-- figures gone benches=cost cols=classic -->\n<!-- end figures -->\n' >"$tmp/gone.md"
tap_ok "a block without its figures file fails" expect_fail "no figures gone" "$figures" check "$tmp/gone.md"

printf '<!-- figures cost benches=cost cols=classic,trace -->\n<!-- end figures -->\n' >"$tmp/mode.md"
tap_ok "a column no row has fails" expect_fail "no row has the mode trace" "$figures" check "$tmp/mode.md"

tap_ok "table renders any rows as bench's results.md: nothing for no row, a column no row has empty" bash -c '
	[ -z "$("$0" table "$1" benches=lookup cols=fp)" ] &&
	"$0" table "$1" benches=walk cols=fp,sframe | grep -qx "| walk | 8 | ns_per_frame | 30 |  |"' \
	"$figures" "$tmp/run/results.tsv"

# A bench that prints each case's ratio after every case's time.
printf '%s\t%s\t%s\t%s\t%s\n' \
	walk 8 fp ns_per_frame 30 \
	walk 32 fp ns_per_frame 20 \
	walk 8 sframe x_fp 2 \
	walk 32 sframe x_fp 3 >"$tmp/walk.tsv"
tap_ok "a case's rows come together, in the order of metrics= when given" bash -c '
	[ "$("$0" table "$1" benches=walk cols=fp,sframe | cut -d"|" -f3,4 | tail -n +3 | tr -d " " | paste -sd" ")" = \
	  "8|ns_per_frame 8|x_fp 32|ns_per_frame 32|x_fp" ] &&
	[ "$("$0" table "$1" benches=walk cols=fp,sframe metrics=x_fp,ns_per_frame | cut -d"|" -f3,4 | tail -n +3 | tr -d " " | paste -sd" ")" = \
	  "8|x_fp 8|ns_per_frame 32|x_fp 32|ns_per_frame" ]' "$figures" "$tmp/walk.tsv"

# A case whose name holds a space and a comma, chosen by a block.
printf '%s\t%s\t%s\t%s\t%s\n' \
	bpf "no-table process,depth=8" fp us_per_call 0.9 \
	bpf depth=8 fp us_per_call 1.4 >"$tmp/run/results.tsv"
"$figures" record spaced --from "$tmp/run/results.tsv" --command "harness/bench bpf" >/dev/null
cat >"$tmp/spaced.md" <<'EOT'
<!-- figures spaced benches=bpf cols=fp cases=no-table process,depth=8 -->
<!-- end figures -->
EOT
tap_ok "cases= of a block may name a case with a space" bash -c '
	"$0" update "$1" >/dev/null && grep -qx "| bpf | no-table process,depth=8 | us_per_call | 0.9 |" "$1" &&
	! grep -q "| depth=8 |" "$1" && "$0" check "$1" >/dev/null' "$figures" "$tmp/spaced.md"

tap_done
