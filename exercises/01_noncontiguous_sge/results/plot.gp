# SPDX-License-Identifier: MIT
# Plot a sweep of exercise 01: bandwidth of zero-copy (several SGEs per work
# request) against pack-and-copy (CPU memcpy, then one SGE), per operation.
#   gnuplot -e "csv='sweep.csv'; out='sweep.svg'" plot.gp
if (!exists("csv")) csv = 'sweep.csv'
if (!exists("out")) out = 'sweep.svg'
set terminal svg size 1300,520 dynamic font "sans,11" background "white"
set output out
set datafile separator ","
set logscale x 2
set xtics ("64" 64, "256" 256, "1K" 1024, "4K" 4096, "16K" 16384, "64K" 65536, "256K" 262144, "1M" 1048576, "4M" 4194304)
set xlabel "message size (bytes of payload)"
set grid
set key below maxrows 3 font ",9"
set yrange [0:*]
colors = "#1f77b4 #d62728 #2ca02c"
blocks = "64 1024 16384"
series(op, method, block) = sprintf("< grep '^%s,%s,%s,' %s", op, method, block, csv)
set multiplot layout 1,3 title "Exercise 01 on Soft-RoCE (rxe) in the micro-VM: zero-copy (solid) vs pack-and-copy (dashed)"
do for [op in "gather-WRITE scatter-READ SEND/RECV"] {
    set title op
    set ylabel "MB/s"
    plot for [i=1:3] series(op, "zero-copy", word(blocks, i)) using 4:8 with linespoints \
             lc rgb word(colors, i) lw 2 pt 7 ps 0.5 title sprintf("%s B blocks, zero-copy", word(blocks, i)), \
         for [i=1:3] series(op, "pack-and-copy", word(blocks, i)) using 4:8 with linespoints \
             lc rgb word(colors, i) lw 2 dt 2 pt 6 ps 0.5 title sprintf("%s B blocks, pack-and-copy", word(blocks, i))
}
unset multiplot
