# successful GETs/s over time, one line per system
set terminal png size 900,450
set output '/work/main/bench/results/crash.png'
set datafile separator ','
set title 'GETs across kill -9 and restart of the server'
set xlabel 'time (s)'
set ylabel 'successful GETs/s'
set xrange [0:12]
set yrange [0:]
set key outside
set arrow from 5, graph 0 to 5, graph 1 nohead dt 2
set arrow from 5, graph 0 to 5, graph 1 nohead dt 3
set label 'kill -9, restart' at 5, graph 0.97 offset 0.5,0
plot '/work/main/bench/results/crash.csv' using 1:(strcol(2) eq 'redn' ? $3/0.1 : 1/0) with lines title 'redn', \
     '/work/main/bench/results/crash.csv' using 1:(strcol(2) eq 'rpc' ? $3/0.1 : 1/0) with lines title 'rpc', \
     '/work/main/bench/results/crash.csv' using 1:(strcol(2) eq 'tcp-stock' ? $3/0.1 : 1/0) with lines title 'tcp-stock'
