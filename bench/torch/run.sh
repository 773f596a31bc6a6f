#!/bin/sh
# run.sh [OUTDIR [ROUNDS]]: every case of every script, one script after
# another (never two at once: each is single-threaded and they would share
# the cores), then the table of medians. The Go benchmark lines go to
# OUTDIR/<script>.txt (benchstat reads them), the scripts' own summaries to
# OUTDIR/<script>.log, the table to OUTDIR/table.md.
set -e
cd "$(dirname "$0")"
out=${1:-out}
rounds=${2:-5}
py=${PYTHON:-python3}
mkdir -p "$out"
$py attention.py --rounds "$rounds" >"$out/attention.txt" 2>"$out/attention.log"
$py rnn.py --rounds "$rounds" >"$out/rnn.txt" 2>"$out/rnn.log"
$py loss.py --rounds "$rounds" >"$out/loss.txt" 2>"$out/loss.log"
$py seq2seq.py --rounds "$rounds" --vocab 8000,32000 --score dot,general,additive \
	>"$out/seq2seq.txt" 2>"$out/seq2seq.log"
$py seq2seq.py --rounds "$rounds" --vocab 8000,32000 --score dot --optim adamw \
	>"$out/seq2seq-adamw.txt" 2>"$out/seq2seq-adamw.log"
{
	$py summarize.py "$out"/attention.txt "$out"/rnn.txt "$out"/loss.txt
	echo
	$py summarize.py "$out"/seq2seq.txt "$out"/seq2seq-adamw.txt
} >"$out/table.md"
cat "$out/table.md"
