#!/bin/bash
# run_parts.sh TREE OUTDIR PARTDIR...: measure.py on each part at TREE, outputs in OUTDIR
TREE=$1; OUT=$2; shift 2; mkdir -p $OUT
for P in "$@"; do n=$(basename $P)
  exp=$P/reviewed.json; [ -f $exp ] || exp=$P/expected.json
  (cd /tmp && PYTHONHASHSEED=0 TF_CPP_MIN_LOG_LEVEL=3 ${PYTHON:-python3} $TREE/tests/tools/scan_corpus/measure.py $P --tree $TREE --expected $exp --show --out $OUT/$n.json > $OUT/$n.txt 2>$OUT/$n.err)
done
