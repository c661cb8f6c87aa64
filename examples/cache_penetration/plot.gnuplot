# SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only
# The cache-penetration example's chart: each gate's false-positive rate
# (the share of requests for absent IDs it lets through to the database) per
# window. Variables: csv (cache_penetration --csv), out (the PNG).
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
# Rows: a header, then per window the gates in this order.
plot csv skip 1 every 3::0 using 1:($4 > 0 ? $4 : 1e-6) \
       with linespoints title "cuckoo (dynamic, grows)", \
     csv skip 1 every 3::1 using 1:($4 > 0 ? $4 : 1e-6) \
       with linespoints title "Bloom (cannot delete)", \
     csv skip 1 every 3::2 using 1:($4 > 0 ? $4 : 1e-6) \
       with linespoints title "counting Bloom"
