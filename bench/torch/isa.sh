#!/bin/sh
# isa.sh [OUTDIR [ROUNDS]]: what the BLAS and the instruction-set choice do to
# a few cases (README, "The BLAS and the instruction set"). Each case runs
# three ways, one after another:
#   reference  Debian out of the box: the reference BLAS (libblas3, forced by
#              LD_LIBRARY_PATH even where OpenBLAS is installed), ATen's own ISA
#   own        OpenBLAS and ATen each with its own choice (--isa own)
#   auto       the harness's default (--isa auto)
# Writes OUTDIR/isa-<way>-<script>.txt and OUTDIR/isa.md.
set -e
cd "$(dirname "$0")"
out=${1:-out}
rounds=${2:-5}
py=${PYTHON:-python3}
ref=/usr/lib/x86_64-linux-gnu/blas
mkdir -p "$out"
for way in reference own auto; do
	case $way in
	reference) env="LD_LIBRARY_PATH=$ref"; isa=own ;;
	own) env=; isa=own ;;
	auto) env=; isa=auto ;;
	esac
	env $env $py attention.py --isa $isa --rounds "$rounds" \
		--run '^(mha-causal/T=512/h=8/dk=64|bahdanau/.*)/fwdbwd$' >"$out/isa-$way-attention.txt"
	env $env $py rnn.py --isa $isa --rounds "$rounds" --run '^lstm/.*/fwdbwd$' >"$out/isa-$way-rnn.txt"
	env $env $py loss.py --isa $isa --rounds "$rounds" --run '^proj-xent/R=256/.*/fwdbwd$' \
		>"$out/isa-$way-loss.txt"
	env $env $py seq2seq.py --isa $isa --rounds "$rounds" >"$out/isa-$way-seq2seq.txt"
done
for way in reference own auto; do
	echo "### $way"
	grep -h -E '^(blas|aten-cpu-capability):' "$out/isa-$way-attention.txt" | sed 's/^/    /'
	$py summarize.py "$out"/isa-$way-*.txt
	echo
done >"$out/isa.md"
cat "$out/isa.md"
