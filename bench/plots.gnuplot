# SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only
# Draws the comparison's charts from its CSV files (bench/filter_compare
# --csv and --fpr_csv), for the regimes that were run:
#   gnuplot -e "csv='compare.csv'; fpr_csv='compare-fpr.csv'; out='compare';
#               regimes='memory io'" bench/plots.gnuplot
# writes
#   <out>-fpr.png            false-positive rate against real filter bits per
#                            key, with the bound log2(1/FPR) bits per key;
#   <out>-storage-reads.png  storage reads per 1000 absent lookups, I/O-bound
#                            (skipped, with a line that says so, without the
#                            io regime);
#   <out>-throughput-<regime>.png  ops/s per workload and filter, median with
#                            the min-max range of the repetitions.
set datafile separator comma
set terminal pngcairo size 1100,650 noenhanced
set grid

set output out . '-fpr.png'
set datafile columnheaders
set title 'False-positive rate vs filter bits per key (equal-FPR grid)'
set xlabel 'filter bits per key (as built)'
set ylabel 'false-positive rate'
set logscale y
set format y '%.0e'
set key top right
# Points resting on fewer than 100 false positives are drawn hollow.
fam(name, precise) = (strcol("family") eq name && column("precise") == precise) \
                     ? column("fpr") : NaN
plot fpr_csv using "bits_per_key":(fam("bloom", 1)) with linespoints pt 7 lc 1 title 'Bloom', \
     fpr_csv using "bits_per_key":(fam("bloom", 0)) with points pt 6 lc 1 notitle, \
     fpr_csv using "bits_per_key":(fam("ribbon", 1)) with linespoints pt 5 lc 2 title 'Ribbon', \
     fpr_csv using "bits_per_key":(fam("ribbon", 0)) with points pt 4 lc 2 notitle, \
     fpr_csv using "bits_per_key":(fam("cuckoo", 1)) with linespoints pt 9 lc 3 title 'cuckoo', \
     fpr_csv using "bits_per_key":(fam("cuckoo", 0)) with points pt 8 lc 3 notitle, \
     [4:24] 2**(-x) with lines dt 2 lc rgb 'black' title 'bound: log2(1/FPR) bits per key'
unset format y

# Bar charts from here on.
unset logscale y
set xlabel ''
set style data histograms
set style fill solid 0.8 border -1

if (strstrt(regimes, 'io') > 0) {
  set output out . '-storage-reads.png'
  set yrange [0:*]
  set title 'Storage reads per 1000 absent lookups, I/O-bound (direct reads, small block cache)'
  set ylabel 'data blocks read from storage per 1000 lookups'
  set style histogram clustered gap 1
  set xtics rotate by -30
  set key top right
  select(workload) = sprintf("< awk -F, 'NR == 1 || ($1 == \"io\" && $2 == \"%s\" && $3 != \"none\")' '%s'", workload, csv)
  plot select('readmissing') using "storage_reads_per_1000":xticlabels(strcol("label")) title 'readmissing (Get)', \
       select('seekmissingprefix') using "storage_reads_per_1000" title 'seekmissingprefix (prefix seek)'
} else {
  print 'plots: no I/O-bound rows (the io regime was not run): the storage-reads chart is skipped'
}

set style histogram errorbars gap 1 lw 1
set logscale y
set yrange [*:*]
set key off
set xtics rotate by -60 font ',8'
set ylabel 'operations per second (median, bars: min-max of the repetitions)'
rows(regime) = sprintf("< awk -F, 'NR == 1 || $1 == \"%s\"' '%s'", regime, csv)
do for [regime in regimes] {
  set output out . '-throughput-' . regime . '.png'
  set title 'Throughput per workload and filter (' . regime . ')'
  plot rows(regime) using "ops_median":"ops_min":"ops_max":xticlabels(strcol("workload") . ' ' . strcol("label")) lc 3
}
