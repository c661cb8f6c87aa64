# Draws the comparison's two charts from its CSV (bench/filter_compare --csv):
#   gnuplot -e "csv='compare.csv'; out='compare'" bench/plots.gnuplot
# writes <out>-fpr.png (false-positive rate against filter bits per key, log
# scale) and <out>-throughput.png (ops/s of every workload and filter).
set datafile separator comma
set datafile columnheaders
set terminal pngcairo size 1000,600 noenhanced

set output out . '-fpr.png'
set title 'False-positive rate (readmissing) vs filter bits per key'
set xlabel 'filter bits per key (SST table properties)'
set ylabel 'false-positive rate (%)'
set logscale y
set grid
set key top right
family(name) = (strcol("filter") eq name) ? column("readmissing_fpr") * 100 : NaN
plot csv using "bits_per_key":(family("bloom")) with linespoints pt 7 title 'Bloom', \
     csv using "bits_per_key":(family("ribbon")) with linespoints pt 5 title 'Ribbon', \
     csv using "bits_per_key":(family("cuckoo")) with linespoints pt 9 title 'cuckoo'

set output out . '-throughput.png'
unset logscale y
set yrange [0:*]
set title 'Throughput per workload (median)'
set xlabel ''
set ylabel 'operations per second'
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.8 border -1
set xtics rotate by -30
set key outside right
label(x) = strcol("filter") . (column("bits_budget") > 0 ? ":" . strcol("bits_budget") : "")
plot csv using "readrandom_ops":xticlabels(label(0)) title 'readrandom', \
     '' using "readmissing_ops" title 'readmissing', \
     '' using "multireadrandom_ops" title 'multireadrandom', \
     '' using "seekprefix_ops" title 'seek prefix', \
     '' using "seekmissingprefix_ops" title 'seek missing prefix'
