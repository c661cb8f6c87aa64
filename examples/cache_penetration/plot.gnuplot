# SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only
# The cache-penetration example's chart: each gate's false-positive rate
# (the share of requests for absent IDs it lets through to the database) per
# window. Variables: csv (cache_penetration or shared_gate --csv), out (the
# PNG), and for shared_gate's single gate, gates=1 and titles.
if (!exists("gates")) gates = 3
if (!exists("titles")) titles = "cuckoo_(dynamic,_grows) Bloom_(cannot_delete) counting_Bloom"
set datafile separator ","
set terminal pngcairo size 900,500 noenhanced
set output out
set title "Requests for absent IDs let through to the database, per window"
set xlabel "window (time)"
set ylabel "false-positive rate"
set logscale y
set format y "%g"
set key outside right
set grid ytics
# Rows: a header, then per window the gates in the order of titles.
plot for [g = 0:gates - 1] csv skip 1 every gates::g \
       using 1:($4 > 0 ? $4 : 1e-6) with linespoints \
       title system(sprintf("echo '%s' | tr '_' ' '", word(titles, g + 1)))
